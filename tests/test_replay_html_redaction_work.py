"""``--redact-secrets`` does work linear in the text: every built-in pattern, on adversarial text.

Python's ``re`` backtracks. A pattern is quadratic when a match can be tried from many positions of one
run of characters and each try scans the rest of the run before it fails: ``\\b[A-Za-z][A-Za-z0-9+.-]*://``
(the first wave's "password in url") on ``a.a.a.…`` tries from every ``a`` (each is a word start) and
each try reads to the end of the text looking for ``://`` — 200 KB of it took minutes.

The work is **counted, not timed**: :class:`Backtracker` runs a pattern (parsed by ``re``'s own parser)
the way ``re``'s engine does — a search tries each start position in turn, a greedy repeat takes what it
can and gives back one at a time, alternatives left to right — and counts every test of one pattern
element at one position. Its matches are checked against ``re``'s on every text, so it runs the same
patterns the same way; ``re``'s own shortcuts (a literal prefix searched for first) only save it work, so
the count is an upper bound of the work up to a constant. Work linear in the text grows 4× when the text
grows 4×; quadratic work 16×. Deterministic: nothing here depends on the machine's speed or load.
"""

from __future__ import annotations

import re
import re._constants as C  # noqa: N812
import re._parser as sre_parse

import pytest

from dshctl.replay.redact import SECRET_PATTERNS, Redactor

# the sizes compared and the growth allowed: linear work grows 4× (plus the constant part), quadratic 16×
SMALL, LARGE = 150, 600
GROWTH_LIMIT = 6.0


class Backtracker:
    """A backtracking matcher over ``re``'s parse tree that counts its steps (the parts the built-in
    patterns use: literals, classes, ``\\b``, groups with flags, alternation, greedy, lazy and possessive
    repeats, atomic groups, lookbehind and lookahead)."""

    def __init__(self, pattern: str) -> None:
        self.tree = sre_parse.parse(pattern)
        self.steps = 0

    def finditer(self, text: str) -> list[tuple[int, int]]:
        """The spans ``re.finditer`` finds (of the whole match), counting steps."""
        self.text = text
        found: list[tuple[int, int]] = []
        start = 0
        while start <= len(text):
            end = self._match(list(self.tree), start, False, lambda position: position)
            if end is None:
                start += 1
                continue
            found.append((start, end))
            start = end if end > start else start + 1
        return found

    # each element of a sequence, then the rest of the sequence, then ``then`` (the continuation)
    def _match(self, nodes, position, fold, then):
        if not nodes:
            return then(position)
        (op, av), rest = nodes[0], nodes[1:]
        self.steps += 1
        text = self.text
        if op in (C.LITERAL, C.NOT_LITERAL, C.IN, C.ANY):
            if position < len(text) and self._one(op, av, text[position], fold):
                return self._match(rest, position + 1, fold, then)
            return None
        if op is C.AT:
            return self._match(rest, position, fold, then) if self._at(av, position) else None
        if op is C.SUBPATTERN:
            _, add, remove, body = av
            inner = (fold or bool(add & C.SRE_FLAG_IGNORECASE)) and not remove & C.SRE_FLAG_IGNORECASE
            return self._match(list(body), position, inner, lambda end: self._match(rest, end, fold, then))
        if op is C.BRANCH:
            for alternative in av[1]:
                end = self._match(list(alternative), position, fold, lambda end: self._match(rest, end, fold, then))
                if end is not None:
                    return end
            return None
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            return self._repeat(op, av, position, fold, lambda end: self._match(rest, end, fold, then))
        if op is C.POSSESSIVE_REPEAT:  # the greedy repeat's first way, never given back
            end = self._repeat(C.MAX_REPEAT, av, position, fold, lambda end: end)
            return None if end is None else self._match(rest, end, fold, then)
        if op is C.ATOMIC_GROUP:
            end = self._match(list(av), position, fold, lambda end: end)
            return None if end is None else self._match(rest, end, fold, then)
        if op in (C.ASSERT, C.ASSERT_NOT):
            direction, body = av
            holds = self._assert(direction, list(body), position, fold)
            if holds == (op is C.ASSERT):
                return self._match(rest, position, fold, then)
            return None
        raise NotImplementedError(op)

    def _repeat(self, op, av, position, fold, then):
        low, high, body = av
        high = len(self.text) + 1 if high is C.MAXREPEAT else high
        body = list(body)
        if len(body) == 1 and body[0][0] in (C.LITERAL, C.NOT_LITERAL, C.IN, C.ANY):  # one character: re's REPEAT_ONE
            (kind, value), = body
            if op is C.MIN_REPEAT:  # one more character at a time, as long as the rest fails
                taken = 0
                while True:
                    if taken >= low:
                        self.steps += 1
                        end = then(position + taken)
                        if end is not None:
                            return end
                    self.steps += 1
                    if taken >= high or position + taken >= len(self.text) or not self._one(kind, value, self.text[position + taken], fold):
                        return None
                    taken += 1
            count = 0
            while count < high and position + count < len(self.text):
                self.steps += 1
                if not self._one(kind, value, self.text[position + count], fold):
                    break
                count += 1
            if count < low:
                return None
            for taken in range(count, low - 1, -1):
                self.steps += 1
                end = then(position + taken)
                if end is not None:
                    return end
            return None

        def more(times, at):
            if op is C.MIN_REPEAT and times >= low:
                end = then(at)
                if end is not None:
                    return end
            if times < high:
                end = self._match(body, at, fold, lambda next_at: more(times + 1, next_at) if next_at > at or times < low else None)
                if end is not None:
                    return end
            if op is C.MAX_REPEAT and times >= low:
                return then(at)
            return None

        return more(0, position)

    def _assert(self, direction, body, position, fold) -> bool:
        if direction > 0:
            return self._match(body, position, fold, lambda end: end) is not None
        width = sre_parse.SubPattern(sre_parse.State(), body).getwidth()[0]
        return position >= width and self._match(body, position - width, fold, lambda end: end if end == position else None) is not None

    def _one(self, op, av, char: str, fold: bool) -> bool:
        if op is C.ANY:
            return char != "\n"
        chars = {char, char.lower(), char.upper()} if fold else {char}
        if op is C.LITERAL:
            return any(ord(c) == av for c in chars)
        if op is C.NOT_LITERAL:
            return all(ord(c) != av for c in chars)
        negate = bool(av) and av[0][0] is C.NEGATE
        hit = any(self._in(av, c) for c in chars)
        return hit != negate

    @staticmethod
    def _in(items, char: str) -> bool:
        code = ord(char)
        for op, av in items:
            if op is C.LITERAL and code == av:
                return True
            if op is C.RANGE and av[0] <= code <= av[1]:
                return True
            if op is C.CATEGORY and _CATEGORIES[av](char):
                return True
        return False

    def _at(self, where, position: int) -> bool:
        text = self.text
        if where in (C.AT_BOUNDARY, C.AT_NON_BOUNDARY):
            before = position > 0 and _word(text[position - 1])
            after = position < len(text) and _word(text[position])
            return (before != after) == (where is C.AT_BOUNDARY)
        if where is C.AT_BEGINNING_STRING:
            return position == 0
        if where is C.AT_END_STRING:
            return position == len(text)
        raise NotImplementedError(where)


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


_CATEGORIES = {
    C.CATEGORY_SPACE: lambda c: c.isspace(),
    C.CATEGORY_NOT_SPACE: lambda c: not c.isspace(),
    C.CATEGORY_DIGIT: lambda c: c.isdecimal(),
    C.CATEGORY_NOT_DIGIT: lambda c: not c.isdecimal(),
    C.CATEGORY_WORD: _word,
    C.CATEGORY_NOT_WORD: lambda c: not _word(c),
}

# Texts a pattern may try from every position and that it may scan far: each unit repeated. The
# characters the patterns' classes repeat, the beginnings of every pattern, and the built-in patterns'
# own examples (tests/test_replay_html.py) cut short.
EXAMPLES = [
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "sk-proj-Ab3dEf6hIj9kLm2nOp5q",
    "ghp_" + "a1" * 18, "github_pat_11ABCDEFG0123456789abcdef", "AKIAIOSFODNN7EXAMPLE", "AIza" + "x" * 35,
    "xoxb-1234567890-abcdef", "sk_live_" + "a" * 24, "hf_" + "a" * 34, "eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeK",
    "Authorization: Bearer abc.def-ghi_jkl", 'API_KEY="0123456789abcdef"', "password: correct-horse",
    "postgres://admin:s3cr3t@db.local/app", "s3://AKID:s3cr3t+key@bucket",
]
UNITS = sorted({
    "a.", "a-", "a+", "a_", "a:", "a ", "a\n", "a@", "a/", "é.", ".", "-", ":", "=", " ", "A", "0", "a://", "a://b:",
    "a://b:c", "a://b:c:", "eyJ-", "eyJa-", "eyJaaaaaaaa.", "eyJaaaaaaaa.eyJ-", "eyJaaaaaaaa.eyJaaaaaaaa.", "bearer ",
    "Bearer\t", "password", "password ", "password=", "token-", "api_key", "apikey:", "-----BEGIN ", "-----BEGIN",
    "-----BEGIN PRIVATE KEY", "-----END ", "sk-", "sk-a", "ghp_", "xoxb-", "sk_live_", "hf_", "AKIA", "AIza",
    *(cut for example in EXAMPLES for cut in (example[:4], example[: len(example) // 2], example[:-1])),
})


def _text(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _work(pattern: str, text: str) -> int:
    machine = Backtracker(pattern)
    spans = machine.finditer(text)
    assert spans == [match.span() for match in re.finditer(pattern, text)], "the counter runs the pattern as re does"
    return machine.steps


def _slow_units(pattern: str, *, first: bool = False) -> list[str]:
    """The units on which the pattern's work grows faster than linear text; with ``first``, up to the
    first one (the quadratic work on each is the slow part of a run)."""
    slow = []
    for unit in UNITS:
        small, large = _work(pattern, _text(unit, SMALL)), _work(pattern, _text(unit, LARGE))
        if large > GROWTH_LIMIT * small:
            slow.append(f"{unit!r}: {small} steps at {SMALL} characters, {large} at {LARGE}")
            if first:
                break
    return slow


@pytest.mark.parametrize("what", [what for what, _ in SECRET_PATTERNS])
def test_each_built_in_pattern_does_linear_work(what):
    assert not _slow_units(dict(SECRET_PATTERNS)[what])


def test_the_count_tells_linear_from_quadratic():
    """The measure itself: the first wave's "password in url" is quadratic on ``a.a.a.…``; a literal is not."""
    assert _slow_units(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:(?P<secret>[^/\s@]+)@", first=True)
    assert not _slow_units(r"://")
    assert _work("x", "x" * LARGE) < 4 * LARGE


def test_the_counter_matches_as_re_does():
    """On each pattern's own examples and on mixed text: the same spans as ``re`` (checked in ``_work``)."""
    mixed = " ".join(EXAMPLES) + " é-eyJ a.b:// -https://u:pw@h BEARER  abcdefgh Password=\"hunter22\""
    for _, pattern in SECRET_PATTERNS:
        _work(pattern, mixed)
        for example in EXAMPLES:
            _work(pattern, example)

