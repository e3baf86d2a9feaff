"""The replay timeline's items: what the user saw, by what it means.

The smallest things that appear on screen are **fragments** — one streamed delta, one tool-call name,
one user message, one turn header … — grouped into :class:`Item` values. A stream run (a compact
``text-chunks`` / ``reasoning-chunks`` / ``tool-call-chunks`` record) becomes **one** item whose
fragments are the run's members, referenced, not copied; every other visible thing is a one-fragment
item. Items are built by :mod:`.builder` and held by :class:`~.timeline.Timeline`.

An item holds what it means — its kind, its log text, its ``info``, the content block it belongs to
(``block_key``) and the layout marks that go before it (:class:`Prefix`) — never how it looks:
:mod:`.view` owns every glyph, line layout and style.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from ..textsafe import has_unsafe, visible, visible_line

__all__ = [
    "EVENT_GAP_MS",
    "TOKEN_GAP_MS",
    "SESSION",
    "TURN",
    "STEP",
    "USER",
    "CONTEXT",
    "COMMAND",
    "TITLE",
    "THINKING",
    "REASONING",
    "TEXT",
    "TOOL_START",
    "TOOL_NAME",
    "TOOL_ARGS",
    "TOOL_END",
    "BLOCK_END",
    "BLOCK",
    "ATTEMPT_FAILED",
    "INTERRUPTED",
    "RETRY",
    "RETRY_STARTED",
    "TOOL_CALL",
    "TOOL_RESULT",
    "TURN_END",
    "NOTE",
    "BLOCKS",
    "REASONING_KINDS",
    "TOOL_KINDS",
    "STREAMED_KINDS",
    "Prefix",
    "Region",
    "Item",
    "Filters",
    "SHOWN",
    "shown",
]

EVENT_GAP_MS = 250
"""Synthetic gap before a visible event whose time the log does not carry."""
TOKEN_GAP_MS = 30
"""Synthetic gap between stream fragments whose times the log does not carry."""

# Item kinds (also the ``kind`` field of the NDJSON export).
SESSION = "session"
TURN = "turn"
STEP = "step"
USER = "user"
CONTEXT = "context"
COMMAND = "command"
TITLE = "title"
THINKING = "thinking"  # reasoning block header
REASONING = "reasoning"  # reasoning fragments
TEXT = "text"  # text fragments
TOOL_START = "tool-start"  # tool-call block header
TOOL_NAME = "tool-name"  # the streamed tool name
TOOL_ARGS = "tool-args"  # argument fragments
TOOL_END = "tool-end"  # tool-call block footer
BLOCK_END = "block-end"  # end of a text / reasoning block (a line break)
BLOCK = "block"  # a whole block shown at once (no deltas were streamed for it)
ATTEMPT_FAILED = "attempt-failed"
INTERRUPTED = "interrupted"
RETRY = "retry"
RETRY_STARTED = "retry-started"
TOOL_CALL = "tool-call"  # the tool/call event: execution starts
TOOL_RESULT = "tool-result"
TURN_END = "turn-end"
NOTE = "note"
BLOCKS = "blocks"  # the content blocks of one message that streamed interleaved: a Region, laid out by block

# What an item's ``info`` holds, by kind (values as the log has them; None where it has none):
#   session          id, version, cwd, createdAt; fixture (the log has no event times)
#   user             text (the prompt; other blocks as placeholders); lines (as shown: trailing blank lines dropped);
#                    parts (text joined by line feeds: one per block), placeholders (indexes of the parts that
#                    are placeholders: metadata such as an attachment's name, not what the user wrote)
#   context          source (its kind); label (source_label); replacesHistory; chars
#   command          name, args
#   title            title (already one safe line)
#   note             note = "todos" (todos) | "compaction" (summarised) | "inherited-prefix-ends"
#                    | "damaged-stream" (settlement: the event type) | "max-tokens" | "unended-turn" (turn)
#                    | "working-directory" (cwd: the session's new effective directory, as the log has it)
#   retry            retry, code, maxRetries, delayMs;  retry-started: retry
#   attempt-failed   code, message, kind ("error" | "aborted"; absent: the attempt ended without a result)
#   tool-call        name, callId, arguments; streamed (the model's block for the call was shown already)
#   tool-result      name, callId, isError, lines (the result as lines), error (the error object, or None)
#   turn-end         reason, turn; by (aborted); code, message (error); durationMs (when known)
#   tool-start       None for a header; name, arguments for a whole block shown at once
#   tool-name        name (None: the arguments began before any name)
#   tool-end         end = "closed" | "not-completed" | "max-tokens" | "whole" (with name, arguments);
#                    dropped (True: a max-tokens finish dropped the call, dsh never ran it)
#   block            type; text (a whole text block) or placeholder (any other block)
#   reasoning        None while streamed; type, text, header (show the header first) for a whole block
#   blocks           None (its parts are in ``region``)
#   every other kind: None.
#   shown            (any kind, redacted replays only) what the outputs show of a value kept as the log has
#                    it for them to branch on (``reason``, ``type`` …) where the redactor changed it (:func:`shown`)

REASONING_KINDS = frozenset({THINKING, REASONING})
TOOL_KINDS = frozenset({TOOL_START, TOOL_NAME, TOOL_ARGS, TOOL_END, TOOL_CALL, TOOL_RESULT})
STREAMED_KINDS = frozenset({TEXT, REASONING, TOOL_ARGS})
"""Kinds whose log text streams: a run's members, or one delta (``reasoning`` is also a whole block)."""


SHOWN = "shown"
"""The ``info`` key of the redacted values of the words the outputs branch on (:mod:`.redact`)."""


def shown(info: dict, key: str) -> Any:
    """What an output shows of ``info[key]``: its redacted value when the redactor changed it, else the
    value itself (branch on ``info[key]``, show this)."""
    redacted = info.get(SHOWN)
    return redacted[key] if redacted is not None and key in redacted else info.get(key)


class Prefix(NamedTuple):
    """Layout marks: what must come before an item's output so it reads in place (:mod:`.view` draws them).

    An item that does not continue the block shown last may first have to end the line, close a tool-call
    frame that was left open and leave a blank line (before a turn)."""

    line_break: bool = False
    """The output so far does not end a line."""
    close_frame: bool = False
    """A tool-call frame left open (its body begun) is closed first."""
    blank_line: bool = False
    dropped: bool = False
    """The call whose frame is closed was dropped by a max-tokens finish (dsh never ran it)."""

    @property
    def ends_line(self) -> bool:
        """Whether the output ends at the start of a line after these marks (every mark ends its line)."""
        return True


class Region:
    """The content blocks of one message whose deltas streamed interleaved (a block showed more after
    another block had shown output, told apart only by their index): the item kind :data:`BLOCKS`.

    ``parts`` are its items in the order they streamed (each with its own ``block_key``, ``start`` —
    the position of its first fragment — and ``count``; the region's fragments are theirs, in that
    order). ``blocks`` lists, per content block, its parts (indexes into ``parts``), blocks in the order
    the message has them (first-seen, as the assembler orders them; an event shown between them, such
    as a failed attempt's line, is a block of its own where it happened). Every output lays a region
    out block by block — each block once, whole so far, in that order — so concurrent blocks grow in
    place, never one piece per fragment (:mod:`.layout`)."""

    __slots__ = ("parts", "blocks", "offsets")

    def __init__(self, parts: list["Item"], blocks: list[list[int]]) -> None:
        self.parts = parts
        self.blocks = blocks
        self.offsets: list[int] = []
        """The region-relative fragment index of each part's first fragment."""
        total = 0
        for part in parts:
            self.offsets.append(total)
            total += part.count


class Item:
    """One thing on the timeline, by what it means; :mod:`.view` decides how it looks.

    A stream run (one compact record) is one item whose ``fragments`` are the record's member strings,
    by reference, one fragment each. Every other item is one fragment: a single streamed delta carries
    its ``text``; an event or a whole block carries what it means in ``info`` (the values as the log
    has them, for the view to compose and the exports to read). ``prefix`` holds the layout marks that
    go before the item's output (None when it continues the block shown last). ``marker`` names the
    item for navigation (cast markers: a turn header, a tool call); ``block_key`` is the
    ``(settlement seq, block index)`` of the stream block the item belongs to (None for events).
    A :data:`BLOCKS` item holds a :class:`Region` (``region``): the interleaved blocks of one message.

    Log text reaches the screen through the item: ``fragments``, ``text`` and ``marker`` are made safe to
    show here (:func:`dshctl.textsafe.visible`); the view makes ``info`` values safe as it composes them.
    """

    __slots__ = (
        "kind",
        "fragments",
        "text",
        "info",
        "prefix",
        "marker",
        "block_key",
        "start",
        "count",
        "turn",
        "step",
        "seq",
        "synthetic",
        "region",
    )

    def __init__(
        self,
        kind: str,
        *,
        fragments: list[str] | None = None,
        text: str | None = None,
        info: dict | None = None,
        prefix: Prefix | None = None,
        marker: str | None = None,
        block_key: Any = None,
        region: Region | None = None,
    ) -> None:
        self.kind = kind
        self.region = region
        if fragments is not None and has_unsafe("".join(fragments)):
            fragments = [visible(fragment) for fragment in fragments]
        self.fragments = fragments
        self.text = visible(text) if text is not None else None
        self.info = info
        self.prefix = prefix
        self.marker = visible_line(marker) if marker is not None else None
        self.block_key = block_key
        if region is not None:
            self.count = sum(part.count for part in region.parts)
        else:
            self.count = len(fragments) if fragments is not None else 1
        self.start = 0
        self.turn: int | None = None
        self.step: int | None = None
        self.seq: int | None = None
        self.synthetic = False

    def ends_line(self) -> bool | None:
        """Whether the output ends at the start of a line once this item is shown (None: it shows
        nothing of its own, the output ends where its prefix or the item before left it).

        Streamed text ends where its last visible piece ends, except that a tool call's frame stays
        open while it streams (its header, its name, its argument pieces); every other item ends its line."""
        kind = self.kind
        if kind == BLOCKS:
            return None  # where a region ends depends on its layout (:mod:`.layout`)
        if kind in STREAMED_KINDS and self.info is None:
            pieces = self.fragments if self.fragments is not None else [self.text]
            last = next((piece for piece in reversed(pieces) if piece), None)
            if last is not None:
                return kind != TOOL_ARGS and last.endswith("\n")
            return self.prefix.ends_line if self.prefix is not None else None
        if kind == TOOL_NAME or (kind == TOOL_START and self.info is None):
            return False
        return True

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Item({self.kind!r}, start={self.start}, count={self.count}, turn={self.turn}, step={self.step})"


@dataclass(frozen=True)
class Filters:
    """What the timeline leaves out (``--no-reasoning``, ``--no-tools``, ``--turns``) and what it blanks
    out (``--redact``, ``--redact-secrets``: a :class:`~.redact.Redactor`, applied as items are built)."""

    reasoning: bool = True
    tools: bool = True
    turns: tuple[int, int | None] | None = None
    """Inclusive turn range ``(first, last)``; ``last`` None = open-ended; None = every turn."""
    redactor: Any = None
    """The :class:`~.redact.Redactor` every item passes through (None: nothing is redacted)."""

    def keeps_turn(self, turn: int | None) -> bool:
        if self.turns is None:
            return True
        if turn is None:
            return False
        first, last = self.turns
        return turn >= first and (last is None or turn <= last)

    def keeps(self, kind: str, turn: int | None) -> bool:
        if kind == SESSION:
            return True
        if not self.reasoning and kind in REASONING_KINDS:
            return False
        if not self.tools and kind in TOOL_KINDS:
            return False
        return self.keeps_turn(turn)
