"""What ``dshctl grep`` looks for: the pattern, compiled once, and the hits it makes in one piece of text.

The pattern is a Python regular expression (``-F``: a fixed string), compiled with ``re.MULTILINE`` so
that ``^`` and ``$`` match at line boundaries inside a block. Case: ``-i`` ignores it; ``-S`` (smart case)
ignores it unless the pattern has an upper-case letter (outside escapes such as ``\\W``); ``-i`` wins
over ``-S``. ``-w`` keeps matches that neither start nor end inside a word (``(?<!\\w)…(?!\\w)``, so a
pattern that begins or ends with a non-word character still works).

A hit is one match. Its ``text`` is the line of the piece that holds it (the lines it spans, for a
match across line breaks), ``match`` its ``[start, end)`` in that text, in code points. Zero-length
matches (``^``, ``x*``) count once per line.
"""

from __future__ import annotations

import re
from typing import Iterator, NamedTuple

from ..errors import UsageError


class Pattern(NamedTuple):
    """A compiled ``dshctl grep`` pattern (picklable: it travels to worker processes)."""

    regex: re.Pattern
    fixed: str | None
    """The string of ``-F`` (for the byte test that skips logs that cannot hold it), else None."""
    ignore_case: bool


def compile_pattern(
    pattern: str, *, fixed: bool = False, ignore_case: bool = False, smart_case: bool = False, word: bool = False
) -> Pattern:
    """The pattern as ``dshctl grep`` reads its options; a bad regular expression is a UsageError."""
    if smart_case and not ignore_case:
        ignore_case = not _has_upper_case(pattern, fixed)
    source = re.escape(pattern) if fixed else pattern
    if word:
        source = rf"(?<!\w)(?:{source})(?!\w)"
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    try:
        regex = re.compile(source, flags)
    except re.error as exc:
        raise UsageError(f"invalid regular expression {pattern!r}: {exc}") from None
    return Pattern(regex, pattern if fixed else None, ignore_case)


_ESCAPE = re.compile(r"\\.", re.S)


def _has_upper_case(pattern: str, fixed: bool) -> bool:
    literal = pattern if fixed else _ESCAPE.sub("", pattern)
    return any(char.isupper() for char in literal)


class Found(NamedTuple):
    """One match in a piece: the lines holding it and where it lies in them."""

    text: str
    start: int
    end: int
    line_start: int
    """Offset of ``text`` in the piece."""


def find(pattern: Pattern, piece: str) -> Iterator[Found]:
    """Every hit of the pattern in one piece of text, in order."""
    last_empty_line = -1
    for match in pattern.regex.finditer(piece):
        start, end = match.span()
        line_start = piece.rfind("\n", 0, start) + 1
        if start == end:
            if line_start == last_empty_line:
                continue
            last_empty_line = line_start
        line_end = _line_end(piece, start, end)
        yield Found(piece[line_start:line_end], start - line_start, min(end, line_end) - line_start, line_start)


def _line_end(piece: str, start: int, end: int) -> int:
    """End of the last line the match ``[start, end)`` touches (a match ending in a line break ends
    that line)."""
    last = end - 1 if end > start and piece[end - 1] == "\n" else end
    found = piece.find("\n", last)
    return len(piece) if found < 0 else found


def context_lines(piece: str, found: Found, lines: int) -> tuple[list[str], list[str]]:
    """Up to ``lines`` lines of the piece before and after a hit's text (never beyond its block)."""
    before: list[str] = []
    end = found.line_start - 1  # the line break that ends the line before
    while end >= 0 and len(before) < lines:
        begin = piece.rfind("\n", 0, end) + 1
        before.append(piece[begin:end])
        end = begin - 1
    before.reverse()
    after: list[str] = []
    begin = found.line_start + len(found.text) + 1
    while begin < len(piece) and len(after) < lines:
        end = piece.find("\n", begin)
        end = len(piece) if end < 0 else end
        after.append(piece[begin:end])
        begin = end + 1
    return before, after
