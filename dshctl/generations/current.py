"""v2, v3 and v4 logs: one event per line, compact streams embedded in settlements.

The embedded-stream model is identical in the three generations (FORMAT §2.2, §2.7,
§2.10); what differs in payloads (replace-op spelling, tool-role results, message
sources) is read through the accessors in :mod:`dshctl.model`, so nothing needs
converting here beyond typing each settlement's stream.

A stream that does not decode into well-formed compact records (wrong types,
a ``dt`` whose length disagrees with the members, an empty run, a time or index
that is not a safe integer: :func:`dshctl.stream.check_shape`) is left as written
in ``data["stream"]`` with a note, so every reader sees either a stream it can
follow or none; ordinary dsh restore does not replay streams either (FORMAT
§8.7), and ``dshctl validate`` reports the rule it breaks.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..model import SETTLEMENT_TYPES, Event
from ..stream import stream_from_builtins


def attach_stream(event: Event) -> None:
    """Move ``data["stream"]`` of a settlement into :attr:`Event.stream` as typed records."""
    if event.type not in SETTLEMENT_TYPES:
        return
    data = event.data
    if not isinstance(data, dict):
        return
    raw: Any = data.get("stream")
    if raw is None:
        event.note("settlement has no stream")
        event.stream = []
        return
    try:
        stream = stream_from_builtins(raw)
    except (msgspec.ValidationError, TypeError, ValueError) as exc:
        event.note(f"stream does not decode into compact records: {exc}")
        return
    del data["stream"]
    event.stream = stream
