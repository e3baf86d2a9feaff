"""``dshctl grep``: find what was said, across every session.

Library use::

    import dshctl

    result = dshctl.grep_log("samples/tour.session.v4.jsonl.zstd", "Node 14", fixed=True)
    for hit in result.hits:
        hit.turn, hit.step, hit.kind, hit.text, hit.match

    for ref, result in dshctl.grep_logs(["samples/sessions"], r"ci\\.yml"):
        ...

* :mod:`.search` — :func:`grep_log`, :func:`grep_logs` and their records (:class:`Hit`, :class:`LogGrep`);
* :mod:`.pattern` — the pattern options and the hits one piece of text gives;
* :mod:`.skip` and :mod:`.rawbytes` — the byte test that lets ``-F`` skip a log without decoding it;
* :mod:`.run` and :mod:`.render` — the command: options, exit status, the output forms.
"""

from __future__ import annotations

from .pattern import Pattern, compile_pattern
from .search import DEFAULT_KINDS, KINDS, SCHEMA, Hit, LogGrep, grep_log, grep_logs

__all__ = ["DEFAULT_KINDS", "KINDS", "SCHEMA", "Hit", "LogGrep", "Pattern", "compile_pattern", "grep_log", "grep_logs"]
