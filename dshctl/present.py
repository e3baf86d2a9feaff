"""Records out, one way for every command: a rich table, one JSON document, or NDJSON records.

A command builds its records once and says how each form looks; this module picks the form. JSON forms
never import rich.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from .errors import UsageError

OUTPUTS = ("table", "json", "ndjson")


def check_output(output: str) -> str:
    if output not in OUTPUTS:
        raise UsageError(f"unknown output {output!r}: choose one of {', '.join(OUTPUTS)}")
    return output


def emit(
    output: str,
    *,
    document: Callable[[], Any],
    records: Callable[[], Iterable[Any]],
    table: Callable[[], None],
) -> None:
    """Write the records in the chosen form: ``document()`` for ``json``, each of ``records()`` for
    ``ndjson``, ``table()`` draws the table. Each is called only when chosen."""
    from .output import emit_json, emit_ndjson

    check_output(output)
    if output == "json":
        emit_json(document())
    elif output == "ndjson":
        emit_ndjson(records())
    else:
        table()
