"""dshctl's own environment settings (``DSHCTL_*``), each declared here once: its name, the values it
takes, and how it is read where it is used.

A command checks them all as it starts (:func:`check`, from :func:`dshctl.commands.start` and the library's
entry points), before it reads anything, so that a bad value is an error of the setting, named —
``dshctl: error: DSHCTL_SPLIT_MIN_BYTES: must be a positive byte count such as 8388608 or 8M, got 'abc'``, status 2
— never an error of the log that was being read when the setting was first used. The man page documents
each one (ENVIRONMENT). This module imports nothing heavy: it runs before every command.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import DshctlError, UsageError

__all__ = ["MAX_LINE_BYTES", "SETTINGS", "SPLIT_MIN_BYTES", "ByteCount", "SettingError", "check", "home_directory"]


class SettingError(UsageError):
    """A ``DSHCTL_*`` environment setting whose value dshctl cannot take: its message names the setting,
    and no log is its location, wherever it was first read."""

    def located(self, *, file: str | None = None, line: int | None = None, seq: int | None = None) -> DshctlError:
        return self


_BYTE_COUNT = r"\s*([0-9]+)\s*([kKmMgG]?)(?:i?[bB])?\s*"
_SCALE = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


class ByteCount:
    """A setting holding a positive byte count: plain bytes, or with a K/M/G[iB] suffix (``128M``); its
    ``default`` where it is unset, which its error's example shows too."""

    __slots__ = ("name", "default")

    def __init__(self, name: str, default: int) -> None:
        self.name, self.default = name, default

    @property
    def example(self) -> str:
        """The default in both spellings a value may take: ``67108864 or 64M``."""
        for suffix, scale in (("G", 1024**3), ("M", 1024**2), ("K", 1024)):
            if self.default % scale == 0:
                return f"{self.default} or {self.default // scale}{suffix}"
        return str(self.default)

    def read(self) -> int:
        """The setting's value, else its default (unset, or blank); a value that is no positive byte count
        is a :class:`SettingError` that shows the example."""
        value = os.environ.get(self.name)
        if value is None or not value.strip():
            return self.default
        import re  # only for a value set: unset, the check costs no import

        match = re.fullmatch(_BYTE_COUNT, value)
        if match is None or int(match.group(1)) <= 0:
            raise SettingError(f"{self.name}: must be a positive byte count such as {self.example}, got {value!r}")
        return int(match.group(1)) * _SCALE[match.group(2).lower()]


MAX_LINE_BYTES = ByteCount("DSHCTL_MAX_LINE_BYTES", 64 << 20)
"""The longest line a log may hold (:mod:`dshctl.source.lines`)."""
SPLIT_MIN_BYTES = ByteCount("DSHCTL_SPLIT_MIN_BYTES", 8 << 20)
"""The smallest part ``stats`` reads one zstd log in on a core of its own (:mod:`dshctl.stats.split`), in
compressed bytes: below it the workers' start-up and the merge cost more than the part's reading saves
(``benchmarks/split_bench.py`` measures the crossover)."""

SETTINGS: tuple[ByteCount, ...] = (MAX_LINE_BYTES, SPLIT_MIN_BYTES)
"""Every ``DSHCTL_*`` setting dshctl reads."""


def check() -> None:
    """Raise the :class:`SettingError` of the first setting whose value cannot be taken."""
    for setting in SETTINGS:
        setting.read()


def home_directory(instead: str) -> Path:
    """The user's home directory (:meth:`Path.home`: ``HOME``, else the passwd entry of the uid). None found
    (``HOME`` unset and a uid without an entry, as under ``env -i`` and ``setpriv``) is a
    :class:`UsageError`, status 2, naming what to set: ``HOME`` or ``instead``, the setting that takes its place."""
    try:
        return Path.home()
    except (RuntimeError, KeyError, OSError):
        raise UsageError(f"no home directory: set HOME or {instead}") from None
