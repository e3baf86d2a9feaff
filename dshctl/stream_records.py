"""The compact stream's record types (FORMAT.md §4.2), declared once: :mod:`dshctl.stream` re-exports
them with the rules that pack, check and read them.

They live apart from the stream core because msgspec's class keywords (``tag``, ``kw_only``,
``omit_defaults``) are what mypyc cannot compile: this module stays pure Python in the compiled build,
and the compiled modules use these classes as any other Python class. They are final (never
subclassed), so that a test such as ``type(record) is RawChunk`` narrows a :data:`Record` both ways for
the type checker.
"""

from __future__ import annotations

from typing import Annotated, Union, final

import msgspec

from dshctl.jsvalues import MAX_SAFE_INTEGER

__all__ = ["BlockIndex", "Members", "RawChunk", "ReasoningChunks", "Record", "SafeInt", "Stream", "TextChunks", "ToolCallChunks"]

SafeInt = Annotated[int, msgspec.Meta(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER)]
BlockIndex = Annotated[int, msgspec.Meta(ge=0, le=MAX_SAFE_INTEGER)]
Members = Annotated[list[str], msgspec.Meta(min_length=1)]


@final
class TextChunks(msgspec.Struct, tag_field="type", tag="text-chunks"):
    """A run of ``text-delta`` chunks of one block."""

    time0: SafeInt
    index: BlockIndex
    dt: list[SafeInt]
    texts: Members


@final
class ReasoningChunks(msgspec.Struct, tag_field="type", tag="reasoning-chunks"):
    """A run of ``reasoning-delta`` chunks of one block."""

    time0: SafeInt
    index: BlockIndex
    dt: list[SafeInt]
    texts: Members


@final
class ToolCallChunks(msgspec.Struct, tag_field="type", tag="tool-call-chunks", kw_only=True, omit_defaults=True):
    """A run of ``tool-call-delta`` chunks with one index, one id and the same ``name`` (or none)."""

    time0: SafeInt
    index: BlockIndex
    dt: list[SafeInt]
    id: str
    name: Union[str, msgspec.UnsetType] = msgspec.UNSET
    args: Members


@final
class RawChunk(msgspec.Struct, tag_field="type", tag="chunk"):
    """One chunk kept as recorded: every non-delta chunk, and tool-call deltas that cannot be packed."""

    time: SafeInt
    chunk: dict


Record = Union[TextChunks, ReasoningChunks, ToolCallChunks, RawChunk]
Stream = list[Record]
