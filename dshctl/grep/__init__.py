"""``dshctl grep``: find what was said, across every session.

Library use: :func:`dshctl.grep` (one log or many: a :class:`~dshctl.api.GrepResult`)::

    import dshctl

    found = dshctl.grep("samples/tour.session.v4.jsonl.zstd", "Node 14", fixed_strings=True)
    for hit in found.hits:
        hit.turn, hit.step, hit.kind, hit.text, hit.match

* :mod:`.search` — :func:`grep_log` (one log) and the records (:class:`Hit`, :class:`LogGrep`);
* :mod:`.pattern` — the pattern options and the hits one piece of text gives;
* :mod:`.skip` and :mod:`.rawbytes` — the byte test that lets ``-F`` skip a log without decoding it;
* :mod:`.run` and :mod:`.render` — the command: the logs read in turn, exit status, the output forms
  (its options: :class:`dshctl.options.GrepOptions`).
"""

from __future__ import annotations

from .pattern import Pattern, compile_pattern
from .search import DEFAULT_KINDS, KINDS, SCHEMA, Hit, LogGrep, grep_log

__all__ = ["DEFAULT_KINDS", "KINDS", "SCHEMA", "Hit", "LogGrep", "Pattern", "compile_pattern", "grep_log"]
