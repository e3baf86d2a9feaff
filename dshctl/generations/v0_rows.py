"""v0/v1 packed chunk rows as msgspec decodes them (FORMAT.md §2.4): the row data of a text/reasoning
and of a tool-call row, and a whole row line in the form dsh writes it, each declared once.

They live apart from :mod:`dshctl.generations.v0` because msgspec's class keywords
(``forbid_unknown_fields``) are what mypyc cannot compile: this module stays pure Python in the compiled
build, and the decoder that judges the rows imports them.
"""

from __future__ import annotations

from typing import Callable

import msgspec

from ..stream_records import BlockIndex, Members, SafeInt

__all__ = ["WIRE_ROW_DECODERS", "TextRowData", "ToolRowData", "WireTextRow", "WireToolRow"]

_Seq = BlockIndex
"""A seq is bounded as a block index is: a non-negative safe integer."""


class TextRowData(msgspec.Struct, forbid_unknown_fields=True):
    turn: int | float
    step: int | float
    index: BlockIndex
    dt: list[SafeInt]
    texts: Members


class ToolRowData(msgspec.Struct, forbid_unknown_fields=True):
    turn: int | float
    step: int | float
    index: BlockIndex
    id: str
    dt: list[SafeInt]
    args: Members
    name: str | msgspec.UnsetType = msgspec.UNSET


class WireTextRow(msgspec.Struct, forbid_unknown_fields=True):
    type: str
    seq0: _Seq
    time0: SafeInt
    data: TextRowData


class WireToolRow(msgspec.Struct, forbid_unknown_fields=True):
    type: str
    seq0: _Seq
    time0: SafeInt
    data: ToolRowData


WIRE_ROW_DECODERS: dict[bytes, Callable[[bytes], WireTextRow | WireToolRow]] = {
    b"text-chunks": msgspec.json.Decoder(WireTextRow).decode,
    b"reasoning-chunks": msgspec.json.Decoder(WireTextRow).decode,
    b"tool-call-chunks": msgspec.json.Decoder(WireToolRow).decode,
}
