"""What was said in a session, as text: prompts, the model's text, reasoning and tool calls, tool
results and titles, each piece placed in its turn and step.

A *piece* is the text of one content block (a tool call gives two: its name and its arguments), never
more, so a search over pieces cannot match across two blocks. Streams are read record by record
(:func:`dshctl.stream.block_texts`): a block's deltas, split across runs, rows or raw records, read as one
text, and nothing is expanded into members. Where a piece sits is :class:`dshctl.turns.Position`'s answer;
its ``seq`` is that of the event holding the text (for streamed text, the settlement).

Kinds (:data:`KINDS`):

* ``user`` — the human prompts: text blocks of ``user/message`` with source kind ``user`` (injected
  context, instructions and summaries are not what the user said), and the slash commands the user
  typed (``command/run``), as the line replay shows them: ``/name args``;
* ``assistant`` / ``reasoning`` — text and reasoning blocks of every settlement, failed attempts included
  (the user saw them stream), or of a message's content when it has no stream;
* ``tool-call`` — the name and the arguments of each tool-call block of those settlements;
* ``tool-result`` — the text blocks of ``tool/result`` in either shape;
* ``title`` — ``session/title``;
* ``context`` — what the harness put in the conversation in the user's place: the text blocks of every
  other ``user/message`` (runtime snapshots, workspace instructions, skills, subagent notices, goal
  rounds, compaction summaries, working-directory notices), the messages replay shows as one
  ``· context:`` line. Not searched unless asked for (:data:`DEFAULT_KINDS`): it is mostly the same
  boilerplate in every session.

A ``working-directory/change`` event holds a path, not text anyone said: it is no piece (it moves nothing
either: the turn and step of what follows are as before). The notice dsh sends the model about it is
``context``.

Text is returned as the log holds it: showing it on a terminal is the caller's business
(:mod:`dshctl.textsafe`).
"""

from __future__ import annotations

from typing import Iterable, Iterator, NamedTuple

from .model import SETTLEMENT_TYPES, Event, tool_result_blocks
from .stream import BlockText, block_texts
from .turns import Position

KINDS = ("user", "assistant", "reasoning", "tool-call", "tool-result", "title", "context")
DEFAULT_KINDS = KINDS[:-1]
"""What is searched when no kinds are named: everything but ``context``."""

_BLOCK_KINDS = {"text": "assistant", "reasoning": "reasoning", "tool-call": "tool-call"}


class Said(NamedTuple):
    """One piece of text: the text of one content block, with the place of the event holding it."""

    kind: str
    seq: int
    turn: int | None
    step: int | None
    text: str


def said(events: Iterable[Event], kinds: Iterable[str] = DEFAULT_KINDS) -> Iterator[Said]:
    """The pieces of ``kinds`` in the events, in log order (blocks in their stream's first-seen order)."""
    wanted = frozenset(kinds)
    want_settlements = not wanted.isdisjoint(_BLOCK_KINDS.values())
    position = Position()
    for event in events:
        turn, step = position.place(event)
        kind = event.type
        if kind in SETTLEMENT_TYPES:
            if want_settlements:
                texts = _settlement_texts(event, wanted)
            else:
                continue
        elif kind == "user/message" and not wanted.isdisjoint(_MESSAGE_KINDS):
            texts = _message_texts(event, wanted)
        elif kind == "command/run" and "user" in wanted:
            texts = (("user", text) for text in _command_line(event))
        elif kind == "tool/result" and "tool-result" in wanted:
            texts = (("tool-result", text) for text in _text_blocks(tool_result_blocks(event)[0]))
        elif kind == "session/title" and "title" in wanted:
            texts = (("title", text) for text in _title(event))
        else:
            continue
        for piece_kind, text in texts:
            yield Said(piece_kind, event.seq, turn, step, text)


def _settlement_texts(event: Event, wanted: frozenset) -> Iterator[tuple[str, str]]:
    """Each block's text: from the stream, or from the message's content when it has none (a legacy or
    synthetic message; also a stream the reader could not type)."""
    blocks = block_texts(event.stream) if event.stream else _content_blocks(event)
    for block in blocks:
        kind = _BLOCK_KINDS.get(block.type)
        if kind is None or kind not in wanted:
            continue
        if kind == "tool-call" and block.name is not None:
            yield kind, block.name
        if block.text:
            yield kind, block.text


def _content_blocks(event: Event) -> list[BlockText]:
    data = event.data
    message = data.get("message") if isinstance(data, dict) and event.type == "assistant/message" else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    blocks = []
    for index, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            continue
        kind = block["type"]
        text = block.get("arguments") if kind == "tool-call" else block.get("text")
        name = block.get("name") if kind == "tool-call" else None
        blocks.append(
            BlockText(index, kind, text if isinstance(text, str) else "", name if isinstance(name, str) and name else None)
        )
    return blocks


_MESSAGE_KINDS = frozenset({"user", "context"})


def _message_texts(event: Event, wanted: frozenset) -> Iterator[tuple[str, str]]:
    """A ``user/message``'s text blocks: a prompt when its source is the user, context otherwise (the rule
    replay draws them by)."""
    message = event.data
    if not isinstance(message, dict):
        return
    source = message.get("source")
    kind = "user" if isinstance(source, dict) and source.get("kind") == "user" else "context"
    if kind in wanted:
        content = message.get("content")
        for text in _text_blocks(content if isinstance(content, list) else []):
            yield kind, text


def _command_line(event: Event) -> Iterator[str]:
    """The line replay shows for a slash command (``dshctl.replay.view``): ``/name``, then the arguments
    with their runs of white space made one space — here never cut, where replay cuts them at 200."""
    data = event.data if isinstance(event.data, dict) else {}
    name, args = data.get("name"), data.get("args")
    if not isinstance(name, str) or not name:
        return
    folded = " ".join(args.split()) if isinstance(args, str) else ""
    yield f"/{name} {folded}" if folded else f"/{name}"


def _text_blocks(blocks: list) -> Iterator[str]:
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str) and text:
                yield text


def _title(event: Event) -> Iterator[str]:
    data = event.data
    title = data.get("title") if isinstance(data, dict) else None
    if isinstance(title, str) and title:
        yield title
