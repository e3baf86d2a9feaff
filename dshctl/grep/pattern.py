"""What ``dshctl grep`` looks for: the pattern, compiled once, and the hits it makes in one piece of text.

The pattern is a Python regular expression (``-F``: a fixed string), compiled with ``re.MULTILINE`` so
that ``^`` and ``$`` match at line boundaries inside a block. Case: ``-i`` ignores it; ``-S`` (smart case)
ignores it unless the pattern has an upper-case letter (outside escapes such as ``\\W``); ``-i`` wins
over ``-S``. ``-w`` keeps matches that neither start nor end inside a word (``(?<!\\w)…(?!\\w)``, so a
pattern that begins or ends with a non-word character still works).

A hit is one match. Its ``text`` is the line of the piece that holds it (the lines it spans, for a
match across line breaks, and the line feed a match ends with), ``match`` its ``[start, end)`` in that
text, in code points: ``text[start:end]`` is always the matched string. Zero-length matches (``^``,
``x*``) count once per line. The text form shows each line matches touch once (:func:`shown_lines`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Iterator, NamedTuple

from ..errors import UsageError


class Pattern(NamedTuple):
    """A compiled ``dshctl grep`` pattern (picklable: it travels to worker processes)."""

    regex: re.Pattern
    fixed: str | None
    """The string of ``-F`` (for the byte test that skips logs that cannot hold it), else None."""
    ignore_case: bool
    invert: bool = False
    """``-v``: the lines without a match are the hits."""


def compile_pattern(
    pattern: str | list[str], *, fixed: bool = False, ignore_case: bool = False, smart_case: bool = False, word: bool = False,
    invert: bool = False,
) -> Pattern:
    """The pattern as ``dshctl grep`` reads its options (several, from ``-e``: a match of any of them,
    as ripgrep reads them); a bad regular expression is a UsageError."""
    patterns = [pattern] if isinstance(pattern, str) else list(pattern)
    if smart_case and not ignore_case:
        ignore_case = not any(_has_upper_case(each, fixed) for each in patterns)
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    sources = []
    for each in patterns:
        source = re.escape(each) if fixed else each
        try:
            re.compile(source, flags)
        except re.error as exc:
            raise UsageError(f"invalid regular expression {each!r}: {exc}") from None
        sources.append(source)
    source = sources[0] if len(sources) == 1 else "|".join(f"(?:{each})" for each in sources)
    if word:
        source = rf"(?<!\w)(?:{source})(?!\w)"
    try:
        regex = re.compile(source, flags)
    except re.error as exc:
        raise UsageError(f"invalid regular expression {' | '.join(patterns)!r}: {exc}") from None
    # the byte test skips a log that cannot hold one -F string: with -v or several, every log is read
    fixed_text = patterns[0] if fixed and len(patterns) == 1 and not invert else None
    return Pattern(regex, fixed_text, ignore_case, invert)


_ESCAPE = re.compile(r"\\.", re.S)


def _has_upper_case(pattern: str, fixed: bool) -> bool:
    literal = pattern if fixed else _ESCAPE.sub("", pattern)
    return any(char.isupper() for char in literal)


class Found(NamedTuple):
    """One match in a piece: the lines holding it and where it lies in them."""

    text: str
    """The lines the match touches, and the line feed that ends the match when it ends with one (so
    ``text[start:end]`` is always the matched string)."""
    start: int
    end: int
    line_start: int
    """Offset of ``text`` in the piece."""

    @property
    def line_count(self) -> int:
        """How many lines of the piece the match touches."""
        return self.text.count("\n", 0, self._last_break_limit()) + 1

    @property
    def last_line_start(self) -> int:
        """Offset in the piece of the last line the match touches."""
        return self.line_start + self.text.rfind("\n", 0, self._last_break_limit()) + 1

    def _last_break_limit(self) -> int:
        # a line feed the match ends with closes its line: it starts none
        return len(self.text) - 1 if self.text.endswith("\n") and self.end == len(self.text) else len(self.text)


def find(pattern: Pattern, piece: str) -> Iterator[Found]:
    """Every hit of the pattern in one piece of text, in order; with ``invert`` (``-v``), every line no
    match touches, as a hit of no characters at its start."""
    if pattern.invert:
        return _unmatched_lines(pattern, piece)
    return _matches(pattern, piece)


def _unmatched_lines(pattern: Pattern, piece: str) -> Iterator[Found]:
    starts = _line_starts(piece)
    touched = bytearray(len(starts))  # by line index: a match spanning lines marks its range once
    reach = -1  # the last line marked: matches come in order, so no line is marked twice
    for found in _matches(pattern, piece):
        first = max(bisect_right(starts, found.line_start) - 1, reach + 1)
        last = bisect_right(starts, found.last_line_start) - 1
        if first <= last:
            touched[first:last + 1] = b"\x01" * (last + 1 - first)
            reach = last
    if piece.endswith("\n"):
        starts.pop()  # the line feed ends the last line: no empty line after it
    for index, start in enumerate(starts):
        if not touched[index]:
            end = starts[index + 1] - 1 if index + 1 < len(starts) else (len(piece) - 1 if piece.endswith("\n") else len(piece))
            yield Found(piece[start:end], 0, 0, start)


def _matches(pattern: Pattern, piece: str) -> Iterator[Found]:
    last_empty_line = -1
    for match in pattern.regex.finditer(piece):
        start, end = match.span()
        line_start = piece.rfind("\n", 0, start) + 1
        if start == end:
            if line_start == last_empty_line:
                continue
            last_empty_line = line_start
        text_end = max(_line_end(piece, start, end), end)
        yield Found(piece[line_start:text_end], start - line_start, end - line_start, line_start)


def _line_end(piece: str, start: int, end: int) -> int:
    """End of the last line the match ``[start, end)`` touches (a match ending in a line break ends
    that line)."""
    last = end - 1 if end > start and piece[end - 1] == "\n" else end
    found = piece.find("\n", last)
    return len(piece) if found < 0 else found


def context_lines(piece: str, found: Found, lines: int | tuple[int, int]) -> tuple[list[str], list[str]]:
    """Up to ``lines`` lines of the piece before and after a hit's text (never beyond its block); a
    pair: so many before, so many after."""
    wanted_before, wanted_after = (lines, lines) if isinstance(lines, int) else lines
    before: list[str] = []
    end = found.line_start - 1  # the line break that ends the line before
    while end >= 0 and len(before) < wanted_before:
        begin = piece.rfind("\n", 0, end) + 1
        before.append(piece[begin:end])
        end = begin - 1
    before.reverse()
    after: list[str] = []
    begin = found.line_start + len(found.text) + (0 if found.text.endswith("\n") else 1)
    while begin < len(piece) and len(after) < wanted_after:
        end = piece.find("\n", begin)
        end = len(piece) if end < 0 else end
        after.append(piece[begin:end])
        begin = end + 1
    return before, after


class Line(NamedTuple):
    """One line of a piece as the text form shows it."""

    text: str
    spans: tuple[tuple[int, int], ...] | None
    """Where matches lie in it (``[start, end)``, in order); None for a context line."""
    number: int = 0
    """Its line number in the block, from 1 (``-n``)."""


def _near(indices: list[int], before: int, after: int, count: int) -> list[int]:
    """The line indices within ``before``/``after`` of any of ``indices`` (sorted), each once: the
    intervals merged as they come, so a wide context costs the lines shown, not lines × hits."""
    shown: list[int] = []
    for index in indices:
        low, high = max(index - before, 0, shown[-1] + 1 if shown else 0), min(index + after, count - 1)
        shown.extend(range(low, high + 1))
    return shown


def shown_lines(piece: str, founds: list[Found], context: int | tuple[int, int]) -> list[list[Line]]:
    """The lines of a piece that matches touch, each once with all its matches, with up to ``context``
    lines around them (a pair: so many before, so many after): runs of consecutive lines of the piece
    (overlapping or touching context joins two runs, as ripgrep joins them)."""
    before, after = (context, context) if isinstance(context, int) else context
    starts = _line_starts(piece)
    spans: dict[int, list[tuple[int, int]]] = {}
    for found in founds:
        begin, end = found.line_start + found.start, found.line_start + found.end
        first = bisect_right(starts, begin) - 1
        last = bisect_right(starts, found.last_line_start) - 1
        for index in range(first, last + 1):
            line_start, line_end = starts[index], _end_of_line(piece, starts, index)
            spans.setdefault(index, []).append((max(begin, line_start) - line_start, min(end, line_end) - line_start))
    shown = _near(sorted(spans), before, after, len(starts))
    runs: list[list[Line]] = []
    for position, index in enumerate(shown):
        if position == 0 or index != shown[position - 1] + 1:
            runs.append([])
        found_spans = spans.get(index)
        line = piece[starts[index] : _end_of_line(piece, starts, index)]
        runs[-1].append(Line(line, tuple(found_spans) if found_spans is not None else None, index + 1))
    return runs


def _line_starts(piece: str) -> list[int]:
    starts = [0]
    position = piece.find("\n")
    while position >= 0:
        starts.append(position + 1)
        position = piece.find("\n", position + 1)
    return starts


def _end_of_line(piece: str, starts: list[int], index: int) -> int:
    return starts[index + 1] - 1 if index + 1 < len(starts) else len(piece)
