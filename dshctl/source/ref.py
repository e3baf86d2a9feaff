"""One log chosen to read (:class:`LogRef`): what :mod:`dshctl.source.paths` finds and
:mod:`dshctl.source.lines` reads. A module of its own, below both, so that a reading needed while logs are
being found (a header read to look a session up, :mod:`dshctl.source.headers`) imports no cycle;
``dshctl.source.paths.LogRef`` is the same class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dshctl.errors import DshctlError

if TYPE_CHECKING:
    from dshctl.source.zipped import HeldArchive, ZipMember

__all__ = ["LogRef"]


@dataclass(frozen=True)
class LogRef:
    """One log file chosen to read.

    ``generation_from_name`` is what the *file name* says (0 for
    ``session.jsonl[.zstd]``, N for ``session.vN.jsonl[.zstd]``, ``None`` when
    the name is not canonical). The header's ``version`` is authoritative.
    Logs found inside an unzipped web export are ``None`` too: dsh exports
    every generation under the logical name ``session.jsonl`` (§1.10).

    ``problem`` is set only for entries found while walking a root, project
    dir or export whose directory could not be resolved (newer generation,
    mixed encodings, obsolete flat layout). Walking continues so one odd
    session does not hide the others; :class:`LineReader` raises ``problem``
    when iterated. An explicitly named session directory raises at once.
    """

    path: Path | None
    display: str
    generation_from_name: int | None
    session_dir: Path | None
    problem: DshctlError | None = field(default=None, compare=False)
    member: "ZipMember | None" = None
    """A log inside a dsh Web UI export ZIP at ``path`` (:mod:`dshctl.source.zipped`): the member read."""
    archive: "HeldArchive | None" = field(default=None, compare=False, repr=False)
    """The export ZIP read from standard input that holds ``member`` (``path`` is then None)."""

    @property
    def reads_stdin(self) -> bool:
        """Whether reading this log reads standard input as it arrives (an export ZIP from standard input
        is held whole: its members can be read again)."""
        return self.path is None and self.archive is None

    @property
    def location(self) -> str:
        """Where the log is, as one string: its path, ``ZIP!member`` inside an export; "" for stdin."""
        if self.path is None:
            return ""
        return f"{self.path}!{self.member.name}" if self.member is not None else str(self.path)
