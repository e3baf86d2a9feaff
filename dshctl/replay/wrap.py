"""A frame's rows folded at the terminal's width, its border continued on every row.

A terminal folds a line longer than its width onto the next row at column 0, so a tool call's or tool
result's ``│`` border is missing on the rows a long line takes. The player's screen continues the
border itself (:func:`.render._wrapped_rows`); the transcript a terminal is sent (``replay --instant``,
the timed stream, ``--follow`` without keys) does the same here: a line that starts with the frame's
``│`` (after a ``--timestamps`` clock) breaks where the terminal would fold it, and goes on after
spaces as wide as the clock and ``│``. Other lines are left to the terminal, which folds them
as they would be folded anyway (and a copy from the screen keeps them whole).

Only dshctl's own break and border are added: the text from the log stays as it was, as data.
"""

from __future__ import annotations

import re

from ..terminal import is_terminal, terminal_width
from .view import BAR, Segment

_STAMP = re.compile(r"\[~?[0-9:.]+\] ")
_CLOCK_SO_FAR = re.compile(r"\[~?[0-9:.]*(\]( )?)?")
"""A ``--timestamps`` clock at the start of a line (:class:`.transcript.Stamper`), whole or begun."""
TAB_STOP = 8


def transcript_width() -> int | None:
    """The width a transcript written to standard output folds a frame's rows at: ``COLUMNS``, else
    the terminal's, when it is a terminal; None for a pipe or a file, which get each line whole."""
    return terminal_width() if is_terminal() else None


def _cells(char: str) -> int:
    if " " <= char < "\x7f":
        return 1
    from rich.cells import get_character_cell_size

    return get_character_cell_size(char)


class FrameWrap:
    """Folds the output it is fed at ``width`` cells where a line is a frame's row. ``state`` is what it
    knows of the line being written, ``(column, lead)``: ``lead`` is None outside a frame's row, else the
    cells before its ``│``; a caller that writes the same output again from an earlier point (a region
    laid out again, :mod:`.frames`) sets it back."""

    __slots__ = ("width", "col", "lead", "head")

    def __init__(self, width: int) -> None:
        self.width = max(width, len(BAR) + 2)
        self.col = 0
        self.lead: int | None = None
        self.head = ""  # the line's text while it may still be a clock before a frame's ``│``

    @property
    def state(self) -> tuple[int, int | None, str]:
        return self.col, self.lead, self.head

    @state.setter
    def state(self, value: tuple[int, int | None, str]) -> None:
        self.col, self.lead, self.head = value

    def feed(self, segments: list[Segment]) -> list[Segment]:
        """``segments`` with a break and the border wherever a frame's row reaches the width."""
        out: list[Segment] = []
        for text, style in segments:
            if not text:
                continue
            for n, piece in enumerate(text.split("\n")):
                if n:
                    out.append(("\n", None))
                    self.col, self.lead, self.head = 0, None, ""
                if piece:
                    self._piece(piece, style, out)
        return out

    def _piece(self, piece: str, style: str | None, out: list[Segment]) -> None:
        if self.lead is None and self.head is not None:  # whether the line is a frame's row is still open
            if style == "frame" and piece.startswith(BAR[0]) and (not self.head or _STAMP.fullmatch(self.head)):
                self.lead = self.col
            elif len(self.head) + len(piece) <= 24 and _CLOCK_SO_FAR.fullmatch(self.head + piece):
                self.head += piece
                self.col += len(piece)
            else:
                self.head = None  # not a frame's row: the terminal folds it
        if self.lead is None:
            out.append((piece, style))
            return
        start = 0
        for index, char in enumerate(piece):
            if char == "\t":
                cells = min((self.col // TAB_STOP + 1) * TAB_STOP, self.width) - self.col
            else:
                cells = _cells(char)
            if self.col + cells > self.width and self.col > self.lead + len(BAR):
                if index > start:
                    out.append((piece[start:index], style))
                out.extend(self._border())
                start = index
            self.col += cells
        if start < len(piece):
            out.append((piece[start:], style))

    def _border(self) -> list[Segment]:
        lead = self.lead or 0
        self.col = lead + len(BAR)
        return [("\n", None)] + ([(" " * lead, None)] if lead else []) + [(BAR, "frame")]
