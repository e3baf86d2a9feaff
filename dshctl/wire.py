"""An event line in the form dsh writes it, as msgspec decodes it in one typed pass:
the envelope's known keys with their types, nothing else. :mod:`dshctl.reader` tries it first and takes
the general path (a dict, judged key by key) for any line it refuses.

It lives apart from the reader because msgspec's class keywords (``forbid_unknown_fields``) are what
mypyc cannot compile: this module stays pure Python in the compiled build.
"""

from __future__ import annotations

from typing import Any, Callable

import msgspec

from .stream_records import SafeInt

__all__ = ["WireEvent", "decode_wire_event"]


class WireEvent(msgspec.Struct, forbid_unknown_fields=True):
    """The common case of an event line, decoded without a dict in between. Anything else (packed rows,
    fixture lines, extra keys, wrong types) fails to decode here and takes the general path."""

    type: str
    seq: int
    time: SafeInt
    data: Any
    sourceEventSeqs: Any = None
    surfaceOp: Any = None
    ignorable: Any = None


decode_wire_event: Callable[[bytes], WireEvent] = msgspec.json.Decoder(WireEvent).decode
