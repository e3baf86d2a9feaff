"""Level ``settlement`` (beyond dsh's load): every ``assistant/message`` agrees with its stream.

dsh proves this only when it publishes a migrated generation ([K] ``generation.ts``
``assertCurrentAssistantStreams``, FORMAT §8.7): the stream is assembled with a fresh
``BlockAssembler`` and the message must deep-equal it — ``message.content`` with ``blocks()`` (or
``interruptedBlocks()`` when ``interrupted``), ``data.usage`` with the last usage chunk (both may be
absent), ``message.source.replayState`` with the assembler's pruned replay state. Attempts and empty
streams stop after expansion (migrated legacy messages carry ``stream: []``).

Streams are assembled with :func:`dshctl.assembler.assemble` (one joined delta per run), which gives the
same blocks as pushing every member because assembly only concatenates. Streams that failed strict
expansion (level ``stream``) are not assembled. For v0/v1 logs the stream is the one dsh's v1→v2 fold
would embed (:mod:`dshctl.generations.v0`).
"""

from __future__ import annotations

from typing import Any

from dshctl.model import Event
from dshctl.assembler import assemble

from .findings import Collector

__all__ = ["check_settlement", "json_equal", "first_difference"]


def json_equal(a: Any, b: Any) -> bool:
    """Deep equality of JSON values as JavaScript sees them (``true`` is not ``1``; key order ignored)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def first_difference(expected: list, actual: Any) -> str:
    if not isinstance(actual, list):
        return "message.content is not an array"
    if len(expected) != len(actual):
        kinds = lambda blocks: ", ".join(str(b.get("type")) if isinstance(b, dict) else "?" for b in blocks)  # noqa: E731
        return f"the stream assembles {len(expected)} block(s) [{kinds(expected)}], the message holds {len(actual)} [{kinds(actual)}]"
    for index, (want, have) in enumerate(zip(expected, actual)):
        if not json_equal(want, have):
            if isinstance(want, dict) and isinstance(have, dict):
                keys = sorted({k for k in want.keys() | have.keys() if not json_equal(want.get(k), have.get(k))})
                return f"block {index} ({want.get('type')}) differs in {', '.join(keys)}"
            return f"block {index} differs"
    return "content differs"


def check_settlement(event: Event, col: Collector) -> None:
    if event.type != "assistant/message" or not event.stream:
        return
    data = event.data
    if not isinstance(data, dict) or not isinstance(data.get("message"), dict):
        return
    message = data["message"]
    where = {"line": event.line, "seq": event.seq, "turn": event.turn, "step": event.step}
    try:
        assembler = assemble(event.stream)
        interrupted = data.get("interrupted") is True
        blocks = assembler.interrupted_blocks() if interrupted else assembler.blocks()
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        col.add("settlement/assemble", f"the stream cannot be assembled: {exc}", **where)
        return
    content = message.get("content")
    if not json_equal(blocks, content):
        what = "interrupted blocks" if interrupted else "assembled blocks"
        col.add("settlement/content", f"message.content differs from the stream's {what}: "
                f"{first_difference(blocks, content)}", **where)
    usage = data.get("usage")
    if not json_equal(assembler.usage, usage):
        col.add("settlement/usage", f"data.usage {_brief(usage)} differs from the stream's last usage chunk "
                f"{_brief(assembler.usage)}", **where)
    source = message.get("source")
    replay = source.get("replayState") if isinstance(source, dict) else None
    expected = assembler.replay_state()
    if not json_equal(expected, replay):
        col.add("settlement/replay-state", "message.source.replayState differs from the assembler's replay state "
                f"({_brief(replay)} vs {_brief(expected)})", **where)


def _brief(value: Any) -> str:
    if value is None:
        return "absent"
    import json

    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."
