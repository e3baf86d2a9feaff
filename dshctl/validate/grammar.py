"""Level ``grammar`` (beyond dsh's load): the per-attempt adapter contract of FORMAT §4.7.

dsh states the contract in ``docs/subsystems/llm-streaming.md`` ("The adapter contract") and the
``StreamChunk`` doc in ``packages/llm/llm/src/types.ts``, and checks it only in the dev companion
``packages/llm/llm/src/invariant.ts``; the production loop and the assembler tolerate violations
(a delta after ``block-end`` and a second ``block-end`` are silently ignored, a reopened index is
merged). Each settlement's stream is one attempt; runs are judged as one delta of their block.

Exceptions dsh documents: ``finish`` with open blocks is fine for ``error``/``aborted`` and tolerated
(warning) for ``max-tokens`` (``max-tokens-continue``); a stream may end without ``finish`` when the
user cancelled (``interrupted`` messages, attempts) or on middleware failure (attempts).
"""

from __future__ import annotations

from typing import Any, Callable

from dshctl.model import Event
from dshctl.stream import RawChunk, ReasoningChunks, TextChunks, ToolCallChunks

from .findings import Collector

__all__ = ["check_grammar"]

_DELTA_BLOCK = {"text-delta": "text", "reasoning-delta": "reasoning", "tool-call-delta": "tool-call"}
_RUN_DELTA = {TextChunks: "text-delta", ReasoningChunks: "reasoning-delta", ToolCallChunks: "tool-call-delta"}


def check_grammar(event: Event, col: Collector) -> None:
    stream = event.stream
    if stream is None:
        return
    where = {"line": event.line, "seq": event.seq, "turn": event.turn, "step": event.step}
    add = col.add
    open_blocks: dict = {}
    closed: set = set()
    usage_seen = False
    finish_reason = None
    finished_at = None
    reported_after = False
    for position, record in enumerate(stream):
        cls = record.__class__
        if cls is RawChunk:
            chunk = record.chunk
            kind = chunk.get("type")
            index = chunk.get("index")
        else:
            kind = _RUN_DELTA[cls]
            index = record.index
        if finished_at is not None:
            if kind == "usage":
                add("grammar/usage-order", f"usage (record {position}) follows finish (record {finished_at})",
                    record=position, **where)
            elif not reported_after:
                add("grammar/after-finish", f"{kind} (record {position}) follows finish (record {finished_at})",
                    record=position, **where)
                reported_after = True
            if kind != "finish":
                continue
        key = _block_key(index)
        if kind in _DELTA_BLOCK:
            wanted = _DELTA_BLOCK[kind]
            if key in closed:
                add("grammar/delta-after-end", f"{kind} for block {index} after its block-end", record=position, **where)
            elif key not in open_blocks:
                add("grammar/delta-target", f"{kind} for block {index}, which no block-start opened", record=position, **where)
            elif open_blocks[key] != wanted:
                add("grammar/delta-target", f"{kind} for block {index}, an open {open_blocks[key]} block",
                    record=position, **where)
        elif kind == "block-start":
            _block_start(chunk, index, key, open_blocks, closed, lambda rule, text: add(rule, text, record=position, **where))
        elif kind == "block-end":
            _block_end(chunk, index, key, open_blocks, closed, lambda rule, text: add(rule, text, record=position, **where))
        elif kind == "usage":
            if usage_seen:
                add("grammar/usage-repeat", "a second usage chunk in one attempt", record=position, **where)
            usage_seen = True
        elif kind == "finish":
            if finished_at is not None:
                continue
            finished_at = position
            reason = chunk.get("reason")
            finish_reason = reason.get("kind") if isinstance(reason, dict) else None
            if open_blocks:
                opened = ", ".join(f"{k[1]} ({v})" for k, v in open_blocks.items())
                if finish_reason == "max-tokens":
                    add("grammar/max-tokens-open", f"finish max-tokens with open block(s) {opened}", record=position, **where)
                elif finish_reason not in ("error", "aborted"):
                    add("grammar/open-at-finish", f"finish {finish_reason} with open block(s) {opened}",
                        record=position, **where)
    if event.type == "assistant/message":
        _settled_message(event, col, where, finished=finished_at is not None, finish_reason=finish_reason)


def _block_start(chunk: dict, index: Any, key: Any, open_blocks: dict, closed: set, add: Callable[[str, str], None]) -> None:
    if key in open_blocks:
        add("grammar/block-start", f"block-start repeats index {index} while that block is open")
    elif key in closed:
        add("grammar/index-reuse", f"block-start reopens index {index} after its block-end (the assembler merges the two blocks)")
    else:
        open_blocks[key] = chunk.get("blockType")


def _block_end(chunk: dict, index: Any, key: Any, open_blocks: dict, closed: set, add: Callable[[str, str], None]) -> None:
    block = chunk.get("block")
    block_type = block.get("type") if isinstance(block, dict) else None
    if key in closed:
        add("grammar/second-block-end", f"second block-end for index {index} (the assembler keeps the first)")
        return
    if key not in open_blocks:
        add("grammar/block-end", f"block-end for index {index}, which no block-start opened")
    else:
        if open_blocks[key] != block_type:
            add("grammar/block-end", f"block-end for index {index} carries a {block_type} block, the block-start opened {open_blocks[key]}")
        del open_blocks[key]
    closed.add(key)


def _settled_message(event: Event, col: Collector, where: dict, *, finished: bool, finish_reason) -> None:
    """What the stream of a settled ``assistant/message`` owes its message: a finish unless interrupted,
    and no tool calls kept after a max-tokens finish."""
    add = col.add
    data = event.data if isinstance(event.data, dict) else {}
    if not finished and data.get("interrupted") is not True and event.stream:
        add("grammar/no-finish", "the stream of a settled, non-interrupted message does not end with finish", **where)
    if finish_reason == "max-tokens":
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool-call" for b in content):
            add("grammar/max-tokens-tool-calls", "a max-tokens finish settled this message, yet message.content still "
                "carries tool-call blocks (truncated calls must be dropped)", **where)


def _block_key(index):
    # JSON 1 and 1.0 name the same block; bools are not indexes.
    if isinstance(index, bool):
        return ("b", index)
    if isinstance(index, float) and index.is_integer():
        return ("n", int(index))
    return ("n", index) if isinstance(index, int) else ("x", repr(index))
