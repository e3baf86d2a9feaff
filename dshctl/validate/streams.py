"""Level ``stream`` (beyond dsh's load): strict expansion of every embedded or folded assistant stream.

dsh expands streams strictly only when it publishes a migrated generation (FORMAT §4.4, §8.7:
``expandAssistantStream`` in the publication verifier); ordinary restore does not replay them, so a
stream damaged by hand passes dsh's load and fails later. ``dshctl validate`` runs the expansion on
every ``assistant/message`` and ``assistant/attempt`` of a v2+ log, on the raw JSON (so ``-0`` and exact
key sets are visible), and then checks every raw chunk against the ``StreamChunk`` union (FORMAT §4.1).

v0/v1 logs have no embedded streams: their ``assistant/chunk`` events are folded by dsh's v1→v2
migration with ``AssistantStreamAccumulator.push``; a chunk that cannot be packed makes dsh refuse
the log on load. Each chunk event is checked the same way here, then against §4.1.

The rules themselves live in :func:`dshctl.stream.expand_strict` (one home for stream rules); this
module maps its ``StreamError.rule`` to the finding ``stream/<rule>``.
"""

from __future__ import annotations

from typing import Any

from dshctl.errors import StreamError
from dshctl.jsvalues import is_lossless_json
from dshctl.stream import Accumulator, expand_strict

from . import payload
from .findings import Collector

__all__ = ["check_embedded_stream", "check_chunk_event"]


def check_embedded_stream(stream: list, col: Collector, where: dict) -> bool:
    """Expand every member of a v2+ stream strictly; report the first violation. True when valid."""
    try:
        for _member in expand_strict(stream):
            pass
    except StreamError as exc:
        col.add(f"stream/{exc.rule}", exc.message, record=exc.record, **where)
        return False
    for index, record in enumerate(stream):
        if record.get("type") == "chunk":
            try:
                payload.check_stream_chunk(record["chunk"], f"stream record {index} chunk")
            except payload.PayloadError as exc:
                col.add("stream/chunk", str(exc), record=index, **where)
                return False
    return True


def check_chunk_event(chunk: Any, col: Collector, where: dict) -> bool:
    """A v0/v1 ``assistant/chunk`` payload: packable by dsh's fold, then a §4.1 ``StreamChunk``."""
    try:
        if not isinstance(chunk, dict):
            raise ValueError("chunk must be an object")
        if not is_lossless_json(chunk):
            raise ValueError("chunk must be lossless JSON (no -0, NaN or Infinity)")
        Accumulator().push(0, chunk)
    except (ValueError, TypeError) as exc:
        col.add("stream/chunk", f"assistant/chunk cannot join a stream (dsh's v1→v2 fold refuses the log): {exc}", **where)
        return False
    try:
        payload.check_stream_chunk(chunk, "assistant/chunk chunk")
    except payload.PayloadError as exc:
        col.add("stream/chunk", str(exc), **where)
        return False
    return True
