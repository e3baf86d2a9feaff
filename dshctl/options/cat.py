"""``dshctl cat`` options."""

from __future__ import annotations

from ..errors import UsageError
from .base import FOLLOW, SALVAGE, STRICT, PathOptions, option


class CatOptions(PathOptions):
    """``dshctl cat``: which events, expanded or not, or the physical lines."""

    type: tuple[str, ...] = option((), "--type", metavar="GLOB", help="Only events whose type matches this glob (repeatable).")
    turn: int | None = option(None, "--turn", metavar="N", help="Only events of this turn number.")
    expand: bool = option(False, "--expand", help="Emit every stream member as its own timed-chunk line.")
    raw: bool = option(False, "--raw", help="Pass the decompressed physical lines through unchanged.")
    strict: bool = STRICT.with_help("A torn tail or dropped damaged tail is an error.")
    salvage: bool = SALVAGE
    follow: bool = FOLLOW.with_help("Keep reading as dsh writes: print each event once it is durable (Ctrl-C ends).")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.raw:
            selecting = [self.fields[name].long for name in ("type", "turn", "expand")
                         if getattr(self, name) != self.fields[name].default]
            if selecting:
                raise UsageError(f"--raw prints the physical lines unchanged; {' and '.join(selecting)} cannot apply to them")
