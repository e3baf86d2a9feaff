"""Records out, one way for every command: a table, one JSON document, or NDJSON records.

A command builds its records once and says how each form looks (:func:`emit`); this module writes the
JSON forms, which never import rich. Tables: :mod:`dshctl.tables`; the stdio and error path (warnings,
exit statuses): :mod:`dshctl.stdio`.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Iterable

from .errors import UsageError
from .textsafe import escape_json_bytes

OUTPUTS = ("table", "json", "ndjson")

_encoder = None


def _json_encoder():
    global _encoder
    if _encoder is None:
        import msgspec

        _encoder = msgspec.json.Encoder()
    return _encoder


def to_json(value: Any) -> bytes:
    """Compact JSON; control characters in strings are escaped (DEL and C1 too, which JSON allows raw)."""
    return escape_json_bytes(_json_encoder().encode(value))


def write_bytes(data: bytes) -> None:
    sys.stdout.buffer.write(data)


def emit_json(value: Any) -> None:
    """One JSON document on stdout."""
    write_bytes(to_json(value) + b"\n")


def emit_ndjson(values: Iterable[Any]) -> None:
    """One JSON value per line on stdout, written in batches."""
    encode = _json_encoder().encode
    out = sys.stdout.buffer
    batch: list[bytes] = []
    for value in values:
        batch.append(encode(value))
        if len(batch) >= 256:
            batch.append(b"")
            out.write(escape_json_bytes(b"\n".join(batch)))
            batch.clear()
    if batch:
        batch.append(b"")
        out.write(escape_json_bytes(b"\n".join(batch)))


def emit(
    output: str,
    *,
    document: Callable[[], Any],
    records: Callable[[], Iterable[Any]],
    table: Callable[[], None],
) -> None:
    """Write the records in the chosen form: ``document()`` for ``json``, each of ``records()`` for
    ``ndjson``, ``table()`` draws the table. Each is called only when chosen."""
    if output == "json":
        emit_json(document())
    elif output == "ndjson":
        emit_ndjson(records())
    elif output == "table":
        table()
    else:
        raise UsageError(f"unknown output {output!r}: choose one of {', '.join(OUTPUTS)}")
