"""``dshctl replay`` options."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from .base import FOLLOW, SALVAGE, PathOptions, option

EXPORT_SUFFIXES = (".cast", ".md", ".markdown", ".ndjson", ".jsonl")
"""What ``--export FILE`` may end in: the suffix chooses the format (:mod:`dshctl.replay.export`)."""


class ReplayOptions(PathOptions):
    """``dshctl replay``: where to start, what to show, how fast, or which file to export.

    Derived when built: ``from_ms`` (``--from`` in ms, or None) and ``filters`` (what ``--turns``,
    ``--no-reasoning`` and ``--no-tools`` keep: a :class:`~dshctl.replay.timeline.Filters`)."""

    speed: float = option(1.0, "--speed", help="Playback speed multiplier, 1/64 (0.015625) to 2048.")
    idle_limit: float = option(2.0, "--idle-limit", help="Cap pauses longer than this many seconds (0 = no cap).")
    turn: int | None = option(None, "--turn", help="Start at this turn (the prefix is drawn at once).")
    from_: str | None = option(None, "--from", help="Start at this recorded time (seconds from the start, or mm:ss).")
    turns: str | None = option(None, "--turns", help="Only these turns, e.g. 2-5 or 3.")
    no_reasoning: bool = option(False, "--no-reasoning", help="Hide reasoning.")
    no_tools: bool = option(False, "--no-tools", help="Hide tool calls and results.")
    instant: bool = option(False, "--instant", help="Print the transcript at once, without timing.")
    timestamps: bool = option(False, "--timestamps", help="Prefix transcript lines with recorded times.")
    export: Path | None = option(None, "--export", convert=Path, help="Write FILE.cast (asciicast), FILE.md (markdown) or FILE.ndjson (timeline).")
    force: bool = option(False, "--force", help="Let --export overwrite an existing file.")
    cast_version: int = option(2, "--cast-version", choices=(2, 3), help="asciicast version for .cast exports.")
    cols: int | None = option(None, "--cols", help="Terminal width written into a .cast export (default 100).")
    rows: int | None = option(None, "--rows", help="Terminal height written into a .cast export (default 30).")
    salvage: bool = SALVAGE
    follow: bool = FOLLOW.with_help(
        "Watch the session as dsh writes it: a live view on a terminal, the transcript as it lands to a pipe."
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        from ..replay.player import MAX_SPEED, MIN_SPEED
        from ..replay.transform import make_filters, parse_from_time

        speed, idle_limit = self.speed, self.idle_limit
        if not MIN_SPEED <= speed <= MAX_SPEED:  # NaN fails too
            raise UsageError(f"--speed must be between 1/64 ({MIN_SPEED}) and {MAX_SPEED:g}, the player's range; got {speed:g}")
        if not idle_limit >= 0 or idle_limit == float("inf"):
            raise UsageError(f"--idle-limit must be 0 (no cap) or a positive number of seconds, got {idle_limit}")
        if self.turn is not None and self.from_ is not None:
            raise UsageError("--turn and --from both choose where to start; use one")
        if self.turn is not None and self.turn < 1:
            raise UsageError(f"--turn {self.turn}: turns are numbered from 1")
        for name in ("cols", "rows"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise UsageError(f"{self.fields[name].long} must be a positive number")
        if self.export is not None and Path(self.export).suffix.lower() not in EXPORT_SUFFIXES:
            raise UsageError(f"--export {self.export}: the file name must end in .cast, .md or .ndjson")
        if self.force and self.export is None:
            raise UsageError("--force only applies with --export FILE")
        filters = make_filters(no_reasoning=self.no_reasoning, no_tools=self.no_tools, turns=self.turns)
        self._derive(from_ms=parse_from_time(self.from_) if self.from_ is not None else None, filters=filters)
        if self.turn is not None and not filters.keeps_turn(self.turn):
            raise UsageError(f"--turn {self.turn} is outside --turns {self.turns}")
        if self.follow and self.export is not None:
            raise UsageError("--follow shows the session as it is written; --export writes a finished one")
