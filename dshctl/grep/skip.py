"""The byte test of ``grep -F``: can a log's decompressed bytes hold the string at all?

Reading a log (decoding every line, folding v0 chunks) costs several times decompressing it; a log whose
bytes cannot hold the string is skipped after decompression. The test must never skip a log that holds
a hit, and the string need not appear verbatim in the bytes even when the text holds it:

* **escapes** — JSON may write any character as ``\\uXXXX`` (Python writers escape every non-ASCII one),
  and ``"``, ``\\``, ``/`` and controls as short escapes. When one of the needle's characters (or, with
  ``-i``, any character matching one) occurs escaped anywhere in the bytes, the log is read;
* **split text** — streamed text is cut into deltas, each its own JSON string (v0 rows, v2+ runs, raw
  chunks). If a hit starts in one delta and goes on in the next, that delta ends with a non-empty proper
  prefix of the needle and its closing quote, then ``,`` ``]`` or ``}`` (JSON whitespace may come
  between). The log is read when any such prefix is found so; an object key (``"…":``) does not count.
  Prefixes longer than :data:`TRIE_CHARS` are not looked for one by one: the log is read when the needle's
  first :data:`TRIE_CHARS` characters occur anywhere (every longer prefix holds them);
* **carriage returns** — the text is searched with CRs dropped, as the user saw it, so a CR may sit
  inside a hit without being in the needle: a CR escape anywhere in the bytes reads the log;

* **case** — with ``-i`` the bytes are compared lower-cased (ASCII); a needle with non-ASCII characters
  always reads the log, and so does one whose letters have non-ASCII twins under Python's case-insensitive
  matching (``K`` KELVIN SIGN for ``k``, ``ſ`` for ``s``, ``İ ı`` for ``i``) when a twin is in the bytes.

Otherwise a hit inside one JSON string shows the needle's UTF-8 bytes verbatim, and a hit across strings
shows a prefix as above: absent both, no hit is possible. The test is a necessary condition only; a log
it keeps is searched in full.
"""

from __future__ import annotations

import re

_SHORT_ESCAPES = {'"': b'\\"', "\\": b"\\\\", "/": b"\\/", "\b": b"\\b", "\f": b"\\f", "\n": b"\\n", "\r": b"\\r", "\t": b"\\t"}
TRIE_CHARS = 64
"""Prefixes up to this long are looked for with one regular expression (nested one group per character:
Python compiles it recursively, and a needle of a few hundred characters would overflow the stack)."""
_CASE_TWINS = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}
"""Non-ASCII characters that Python's ``re.IGNORECASE`` matches with an ASCII letter (a test checks the
table against every code point)."""


class ByteTest:
    """Whether decompressed log bytes may hold a fixed string (see the module doc)."""

    def __init__(self, needle: str, ignore_case: bool) -> None:
        self.ignore_case = ignore_case
        self.possible = bool(needle) and (needle.isascii() or not ignore_case)
        """False: the test cannot rule anything out (empty needle; non-ASCII needle with ``-i``)."""
        if not self.possible:
            return  # nothing below is used, and a non-ASCII needle's case mappings may be several characters
        text = needle.lower() if ignore_case else needle
        self.needle = text.encode()
        self.text = text
        self._cuts = {len(text[:cut].encode()): cut for cut in range(1, len(text))}
        """Byte length of each proper prefix → its length in characters (where the needle is cut)."""
        trie = text[: min(len(text) - 1, TRIE_CHARS)]
        self._prefix_end = re.compile(b"(" + _prefix_trie(trie) + rb')"\s*[,\]}]') if trie else None
        """A string ending with a short non-empty prefix of the needle (a value: ``,`` ``]`` or ``}`` follows)."""
        self._long_prefix = text[:TRIE_CHARS].encode() if len(text) - 1 > TRIE_CHARS else None
        """A string ending with a longer prefix holds this one verbatim (module doc)."""
        self._starts: dict[int, re.Pattern] = {}
        characters = _matching_characters(text, ignore_case)
        self.short_escapes = [_SHORT_ESCAPES[char] for char in characters if char in _SHORT_ESCAPES]
        self.unicode_escape = _unicode_escape_pattern(characters)
        self.twins = [twin.encode() for char in text for twin in _CASE_TWINS.get(char, "")] if ignore_case else []

    def may_hold(self, data: bytes) -> bool:
        if not self.possible:
            return True
        if self.ignore_case:
            data = data.lower()
        if self.needle in data or self._escaped(data):
            return True
        if any(twin in data for twin in self.twins):
            return True
        return self._split(data)

    def _escaped(self, data: bytes) -> bool:
        if any(escape in data for escape in self.short_escapes):
            return True
        return b"\\u" in data and self.unicode_escape.search(data) is not None

    def _split(self, data: bytes) -> bool:
        """Whether one delta may end with a proper prefix of the needle while another starts with the
        character that follows it (module doc)."""
        if self._long_prefix is not None and self._long_prefix in data:
            return True
        if self._prefix_end is None:
            return False
        tried: set[int] = set()
        position = 0
        # every start, overlapping ones too: "aba" in `aba",` ends two prefixes of "abab"
        while (found := self._prefix_end.search(data, position)) is not None:
            cut = self._cuts[len(found.group(1))]
            if cut not in tried:
                tried.add(cut)
                if self._member_start(cut).search(data):
                    return True
            position = found.start() + 1
        return False

    def _member_start(self, cut: int) -> re.Pattern:
        pattern = self._starts.get(cut)
        if pattern is None:
            pattern = self._starts[cut] = re.compile(rb'[\[,:]\s*"' + re.escape(self.text[cut].encode()))
        return pattern


def _matching_characters(text: str, ignore_case: bool) -> set[str]:
    """The characters that can stand for one of the needle's in a hit, and CR: a hit's text is searched
    with its carriage returns dropped (:func:`dshctl.textsafe.without_cr`), so one may sit anywhere in it."""
    characters = set(text) | {"\r"}
    if ignore_case:
        for char in text:
            characters.update((char.upper(), char.lower()), _CASE_TWINS.get(char, ""))
    return characters


def _unicode_escape_pattern(characters: set[str]) -> re.Pattern:
    """``\\uXXXX`` (any hex case) of each character; for one beyond the BMP, its high surrogate."""
    units = set()
    for char in characters:
        code = ord(char)
        units.add(code if code < 0x10000 else 0xD800 + ((code - 0x10000) >> 10))
    alternatives = b"|".join(b"%04x" % unit for unit in sorted(units))
    return re.compile(rb"\\u(?:" + alternatives + rb")", re.IGNORECASE)


def _prefix_trie(text: str) -> bytes:
    """A regular expression matching every non-empty prefix of ``text`` (``a(?:b(?:c)?)?``): one scan finds
    them all, the first character leading it."""
    pattern = b""
    for char in reversed(text):
        pattern = re.escape(char.encode()) + (b"(?:" + pattern + b")?" if pattern else b"")
    return pattern
