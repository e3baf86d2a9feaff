"""Chunks → content blocks: dsh's ``BlockAssembler`` (FORMAT.md §4.6), the algorithm behind every
``assistant/message.content``, and :func:`assemble`, which feeds it a compact stream run by run.

Rules, as dsh's ``packages/llm/llm/src/assembler.ts`` applies them:

* Blocks are tracked per ``index`` in first-seen order (first ``block-start``, delta or ``block-end``),
  not numeric order. A delta for an unseen index creates the block (delta-only streams work); a
  ``block-start`` for a known index is ignored.
* ``block-end`` closes a block and its ``block`` replaces whatever the deltas built; the first close
  wins; deltas after the close are ignored.
* A tool call keeps the last delta's ``id``, takes ``name`` only from deltas whose name is truthy, and
  concatenates ``argumentsDelta``.
* An open block assembles from its deltas: ``{"type": "text"|"reasoning", "text": joined}`` and
  ``{"type": "tool-call", "id": id, "name": name, "arguments": joined}`` (keys in that order). With no
  delta at all the id is ``"call-<index>"`` and the name ``""``; a delta's id is kept even when it is
  ``""`` (dsh uses ``??``, not ``||``). A ``block-start`` of a text block with no deltas gives an empty
  text block ``{"type": "text", "text": ""}``. An open block of any other kind makes ``blocks()`` raise
  ValueError.
* The deltas of an index accumulate whatever kind created the block: a text delta into a tool-call
  block is kept but never shown, exactly as in dsh.
* ``usage``: the last ``usage`` chunk wins. ``finish``/``replayState``: the last ``finish`` wins (a last
  finish without ``replayState`` clears it); no finish reads as ``{"kind": "stop"}``.
* A ``max-tokens`` finish drops every tool-call block from ``blocks()``; ``truncated_tool_calls()``
  returns what was dropped (later dsh builds expose the same list).
* ``replay_state()``: without ``blocks`` the envelope is returned as-is; if ``len(blocks)`` differs from
  the number of *all* assembled blocks (before the drop) it is discarded (None); after a max-tokens
  drop its entries are pruned at the same positions, giving ``{"response": …, "blocks": […]}``.
* ``interrupted_blocks()``: text and reasoning blocks, closed or open, whose text has a non-whitespace
  character (JavaScript's ``trim``), in order — the content of ``interrupted: true`` messages.

Closed blocks are returned as the very dicts the ``block-end`` chunks carried; do not mutate them.
Malformed inputs dsh would crash on are handled quietly where that is cheap: a ``replayState`` that is
not an object, or whose ``blocks`` is null, is returned as-is; a non-string ``text`` has no visible text.
"""

from __future__ import annotations

from typing import Any, Iterable

import msgspec

from dshctl.jsvalues import has_non_whitespace
from dshctl.stream import RawChunk, ReasoningChunks, Record, TextChunks

__all__ = ["BlockAssembler", "assemble"]

_STOP = {"kind": "stop"}


class _Partial:
    __slots__ = ("block_type", "text_parts", "call_id", "call_name", "argument_parts", "block")

    def __init__(self, block_type: Any) -> None:
        self.block_type = block_type
        self.text_parts: list[str] = []
        self.call_id: Any = None
        self.call_name: Any = None
        self.argument_parts: list[str] = []
        # The block-end's block once closed; closing freezes the partial.
        self.block: dict | None = None


def _index_label(index: Any) -> Any:
    # JavaScript prints the number 3.0 as "3".
    return int(index) if isinstance(index, float) and index.is_integer() else index


class BlockAssembler:
    """Incrementally assembles stream chunks (dicts) into content blocks."""

    __slots__ = ("_partials", "_order", "_usage", "_finish", "_replay_state")

    def __init__(self) -> None:
        self._partials: dict[Any, _Partial] = {}
        self._order: list[Any] = []
        self._usage: dict | None = None
        self._finish: dict | None = None
        self._replay_state: Any = None

    def _ensure(self, index: Any, block_type: Any) -> _Partial:
        partial = self._partials.get(index)
        if partial is None:
            partial = self._partials[index] = _Partial(block_type)
            self._order.append(index)
        return partial

    def push(self, chunk: dict) -> None:
        kind = chunk.get("type")
        if kind == "text-delta" or kind == "reasoning-delta":
            partial = self._ensure(chunk.get("index"), "text" if kind == "text-delta" else "reasoning")
            if partial.block is None:
                partial.text_parts.append(chunk.get("text"))
        elif kind == "tool-call-delta":
            partial = self._ensure(chunk.get("index"), "tool-call")
            if partial.block is None:
                partial.call_id = chunk.get("id")
                name = chunk.get("name")
                if name:
                    partial.call_name = name
                partial.argument_parts.append(chunk.get("argumentsDelta"))
        elif kind == "block-start":
            index = chunk.get("index")
            if index not in self._partials:
                self._partials[index] = _Partial(chunk.get("blockType"))
                self._order.append(index)
        elif kind == "block-end":
            block = chunk["block"]
            partial = self._ensure(chunk.get("index"), block.get("type"))
            if partial.block is None:
                partial.block = block
        elif kind == "usage":
            self._usage = chunk.get("usage")
        elif kind == "finish":
            self._finish = chunk.get("reason")
            self._replay_state = chunk.get("replayState")
        else:
            raise ValueError(f"unknown stream chunk type {kind!r}")

    @staticmethod
    def _assemble(partial: _Partial, index: Any) -> dict:
        if partial.block is not None:
            return partial.block
        block_type = partial.block_type
        if block_type == "text" or block_type == "reasoning":
            return {"type": block_type, "text": "".join(partial.text_parts)}
        if block_type == "tool-call":
            return {
                "type": "tool-call",
                "id": partial.call_id if partial.call_id is not None else f"call-{_index_label(index)}",
                "name": partial.call_name if partial.call_name is not None else "",
                "arguments": "".join(partial.argument_parts),
            }
        raise ValueError(f'cannot assemble incomplete block of type "{block_type}" at index {index!r}')

    def _all_blocks(self) -> list[dict]:
        partials = self._partials
        return [self._assemble(partials[index], index) for index in self._order]

    def _truncating(self) -> bool:
        finish = self.finish
        return isinstance(finish, dict) and finish.get("kind") == "max-tokens"

    def blocks(self) -> list[dict]:
        """Every block in first-seen order; a max-tokens finish drops the tool calls."""
        blocks = self._all_blocks()
        if self._truncating():
            return [block for block in blocks if block.get("type") != "tool-call"]
        return blocks

    def truncated_tool_calls(self) -> list[dict]:
        """The tool-call blocks a max-tokens finish dropped (empty for any other finish)."""
        if not self._truncating():
            return []
        return [block for block in self._all_blocks() if block.get("type") == "tool-call"]

    def interrupted_blocks(self) -> list[dict]:
        """Text/reasoning blocks (closed or open) with non-whitespace text, in order."""
        kept = []
        for index in self._order:
            partial = self._partials[index]
            block_type = partial.block.get("type") if partial.block is not None else None
            if block_type is None:
                block_type = partial.block_type
            if block_type != "text" and block_type != "reasoning":
                continue
            block = self._assemble(partial, index)
            if block.get("type") in ("text", "reasoning") and has_non_whitespace(block.get("text")):
                kept.append(block)
        return kept

    @property
    def usage(self) -> dict | None:
        """The last ``usage`` chunk's usage, or None."""
        return self._usage

    @property
    def finish(self) -> dict:
        """The last ``finish`` chunk's reason; ``{"kind": "stop"}`` when there was none."""
        return self._finish if self._finish is not None else dict(_STOP)

    def replay_state(self) -> Any:
        """The last finish's ``replayState``, pruned in step with ``blocks()``; None when misaligned."""
        envelope = self._replay_state
        if not isinstance(envelope, dict) or envelope.get("blocks") is None:
            return envelope
        entries = envelope["blocks"]
        all_blocks = self._all_blocks()
        if len(entries) != len(all_blocks):
            return None
        if not self._truncating():
            return envelope
        kept = [block.get("type") != "tool-call" for block in all_blocks]
        if all(kept):
            return envelope
        pruned: dict = {}
        if "response" in envelope:
            pruned["response"] = envelope["response"]
        pruned["blocks"] = [entry for entry, keep in zip(entries, kept) if keep]
        return pruned


def assemble(stream: Iterable[Record], assembler: BlockAssembler | None = None) -> BlockAssembler:
    """Feed a compact stream to a ``BlockAssembler``: one joined delta per run, raw chunks as recorded.

    Equivalent to pushing every member, because assembly only concatenates a block's fragments and a
    run never spans a ``block-end``. Trusts its input.
    """
    if assembler is None:
        assembler = BlockAssembler()
    push = assembler.push
    for record in stream:
        cls = record.__class__
        if cls is RawChunk:
            push(record.chunk)
        elif cls is TextChunks:
            push({"type": "text-delta", "index": record.index, "text": "".join(record.texts)})
        elif cls is ReasoningChunks:
            push({"type": "reasoning-delta", "index": record.index, "text": "".join(record.texts)})
        elif record.name is msgspec.UNSET:
            push({"type": "tool-call-delta", "index": record.index, "id": record.id, "argumentsDelta": "".join(record.args)})
        else:
            push(
                {
                    "type": "tool-call-delta",
                    "index": record.index,
                    "id": record.id,
                    "name": record.name,
                    "argumentsDelta": "".join(record.args),
                }
            )
    return assembler
