"""Payload admission of dsh's released codecs: which ``data`` members each event type has, and what they mean.

The rules are those of ``@deepseek-ai/dsh-session-format-v0-to-v1@0.1.3-alpha.2``
(``RELEASED_V0_EVENT_DISPOSITIONS``, ``assertReleasedEventPayload``, ``assertReleasedPayloadSemantics``:
FORMAT §2.5, §3.3–§3.6), the released-v2 inventory of ``-v1-to-v2`` and the admission of
``-v2-to-v3@0.1.5-alpha.1`` (``assertEvent``, ``assertV3StructuralRow``, ``assertCanonicalPayload``:
FORMAT §2.7), plus the v4 admission of FORMAT §2.10. Each check raises :class:`PayloadError` with a
message that names the member at fault; the caller turns it into a finding.

The package, by seam:

* :mod:`dshctl.validate.values` — the value rules and their raising forms (``need_count`` …);
* :mod:`.inventories` — the data members each released event type has;
* :mod:`.shapes` — shapes several event types share (messages, sources, content blocks, usage, failures …);
* :mod:`.checkers` — one checker per event type, in the order dsh's released checks run;
* :mod:`.admission` — the entry points, one per generation, and what only that generation admits;
* :mod:`.declared` — events newer than the released admission, judged by the payload dsh declares.
"""

from __future__ import annotations

from ..values import PayloadError
from .admission import (
    DescriptorVersion,
    check_v0_event,
    check_v2_migration,
    check_v3_event,
    check_v4_event,
    is_repair_identity,
)
from .inventories import V0_DISPOSITIONS, V2_DISPOSITIONS
from .checkers import semantics
from .declared import DECLARED_RULES, check_declared
from .shapes import check_stream_chunk

__all__ = [
    "PayloadError",
    "DescriptorVersion",
    "V0_DISPOSITIONS",
    "V2_DISPOSITIONS",
    "check_v0_event",
    "check_v2_migration",
    "check_v3_event",
    "check_v4_event",
    "check_stream_chunk",
    "DECLARED_RULES",
    "check_declared",
    "is_repair_identity",
    "semantics",
]
