"""Redaction of a replay: ``--redact REGEX`` and ``--redact-secrets``, in one place for every output.

The timeline is redacted as it is built (:func:`redact_items`, called by :mod:`.builder` on the items of
each event before anything reads them), so the terminal player, the transcript (``--instant``), the
cast, the markdown, the NDJSON timeline and the HTML page all show the same redacted text, and a
redacted secret is in none of them (nor in the page's compressed data). A match becomes
:data:`MARKER`. Streamed text is redacted as a whole block, never delta by delta: a key streamed in
three deltas is still one match (:meth:`Redactor.redact_pieces`); the marker appears with the delta
where the match began, and the deltas it covered show nothing more. In an item's ``info`` only the
log's words the outputs branch on keep their value (:data:`WORD_KEYS`: a turn's end ``reason``, a
block's ``type`` …), what they show of them is redacted beside it (:data:`~.items.SHOWN`); every other
string is the log's text and is redacted (prompts, answers, names, ids, arguments, results, messages,
paths, titles, todo contents). The log's header (its id and cwd) is the timeline's first item, so it
is redacted too, and every output reads it from there (:attr:`~.timeline.Timeline.session`).

The built-in patterns (``--redact-secrets``), each a regular expression whose named group ``secret``,
when it has one, is the part replaced (so ``Bearer `` and the user name in a URL stay readable):

* API keys: ``sk-…`` (OpenAI, DeepSeek, Anthropic ``sk-ant-…``), GitHub (``ghp_``, ``gho_``, ``ghu_``,
  ``ghs_``, ``ghr_``, ``github_pat_``), AWS access key ids (``AKIA…``, ``ASIA…``), Google (``AIza…``),
  Slack (``xox[abprs]-…``), Stripe (``sk_live_``, ``rk_live_``…), Hugging Face (``hf_…``);
* JSON Web Tokens (three base64url parts, the first two starting ``eyJ``);
* bearer tokens: the token after ``Bearer`` (any case);
* ``key = value`` assignments of a password, secret, token or API key (``API_KEY=…``, ``"password": "…"``);
* private keys: ``-----BEGIN … PRIVATE KEY-----`` to its ``-----END … PRIVATE KEY-----`` line (or to
  the end of the text when the end line is missing — a cut key is still a key);
* passwords in URLs: the password of ``scheme://user:password@host``.

A pattern that can match the empty string is refused (it would put a marker between every two
characters); empty matches of other patterns (``\\b``) are ignored.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from ..errors import UsageError
from .items import SHOWN, STREAMED_KINDS

MARKER = "[redacted]"

SECRET_PATTERNS: tuple[tuple[str, str], ...] = (
    ("private key", r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY-----|[\s\S]*)"),
    ("api key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}"),
    ("github token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("aws access key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("google api key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("slack token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    ("stripe key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("hugging face token", r"\bhf_[A-Za-z0-9]{30,}"),
    (
        "json web token",
        r"(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*+\.eyJ)(?>[A-Za-z0-9_-]*?(?=\beyJ[A-Za-z0-9_-]{8}))"
        r"(?P<secret>eyJ[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+)",
    ),
    ("bearer token", r"(?i:\bbearer)\s+(?P<secret>[A-Za-z0-9._~+/=-]{8,})"),
    (
        "assigned secret",
        r"(?i:\b[A-Za-z0-9_]*(?:password|passwd|secret|token|api[_-]?key)[\"']?\s*[:=]\s*[\"']?)"
        r"(?P<secret>[^\s\"',;}]{6,})",
    ),
    ("password in url", r"(?<![A-Za-z0-9+.-])[0-9+.-]*+[A-Za-z][A-Za-z0-9+.-]*+://[^/\s:@]+:(?P<secret>[^/\s@]+)@"),
)
"""``(what, regular expression)``: the patterns ``--redact-secrets`` applies (documented in the man page).

Each does work linear in the text (tests/test_replay_html_redaction_work.py counts it): ``re``
backtracks, so a pattern that may start at many places of one run of characters and scan the rest of the
run from each is quadratic (``a.a.a.…`` 200 KB long took minutes). So a pattern whose first part is a
run starts only where the run starts (a lookbehind), and takes the run whole (possessive ``*+``). The JSON
web token is tried once per run of base64url characters: the run must end in ``.eyJ`` (a lookahead), and
the token (``secret``) starts at the run's first ``eyJ`` at a word start, as before. A URL's scheme is the
whole run of scheme characters before ``://`` with a letter in it (a letter after a digit, ``_`` or a
non-ASCII letter now starts one too: the password of ``9https://u:pw@h`` is redacted)."""


class Redactor:
    """Replaces every match of its patterns with :data:`MARKER`. With no pattern it changes nothing."""

    def __init__(self, patterns: Iterable[str] = (), *, secrets: bool = False) -> None:
        compiled: list[re.Pattern] = []
        for text in patterns:
            try:
                pattern = re.compile(text)
            except re.error as exc:
                raise UsageError(f"--redact {text!r}: not a regular expression ({exc})") from None
            if pattern.fullmatch(""):
                raise UsageError(f"--redact {text!r} matches the empty string; it would redact nothing and everything")
            compiled.append(pattern)
        if secrets:
            compiled.extend(re.compile(pattern) for _, pattern in SECRET_PATTERNS)
        self.patterns = compiled

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The ``(start, end)`` spans to replace, sorted, overlapping and touching spans merged."""
        found: list[tuple[int, int]] = []
        for pattern in self.patterns:
            secret = "secret" in pattern.groupindex
            for match in pattern.finditer(text):
                start, end = match.span("secret") if secret and match.start("secret") >= 0 else match.span()
                if end > start:
                    found.append((start, end))
        if not found:
            return found
        found.sort()
        merged = [found[0]]
        for start, end in found[1:]:
            last_start, last_end = merged[-1]
            if start <= last_end:
                merged[-1] = (last_start, max(last_end, end))
            else:
                merged.append((start, end))
        return merged

    def redact(self, text: str) -> str:
        if not self.patterns or not text:
            return text
        spans = self.spans(text)
        if not spans:
            return text
        out: list[str] = []
        at = 0
        for start, end in spans:
            out += [text[at:start], MARKER]
            at = end
        out.append(text[at:])
        return "".join(out)

    def redact_pieces(self, pieces: list[str]) -> list[str]:
        """``pieces`` (the deltas of one streamed block, in order) redacted as one text, cut again where
        the pieces were cut: a match's marker goes to the piece where it begins, the rest of the match
        is left out of the pieces it covers. As many pieces come back, so fragment times still apply."""
        if not self.patterns:
            return pieces
        spans = self.spans("".join(pieces))
        if not spans:
            return pieces
        out: list[str] = []
        span = 0
        offset = 0
        for piece in pieces:
            end_of_piece = offset + len(piece)
            kept: list[str] = []
            at = offset
            while at < end_of_piece:
                while span < len(spans) and spans[span][1] <= at:
                    span += 1
                if span == len(spans) or spans[span][0] >= end_of_piece:
                    kept.append(piece[at - offset :])
                    break
                start, end = spans[span]
                if start > at:
                    kept.append(piece[at - offset : start - offset])
                    at = start
                if start >= offset and start == at:
                    kept.append(MARKER)
                at = min(end, end_of_piece)
            out.append("".join(kept))
            offset = end_of_piece
        return out

    def lines(self, lines: list[str]) -> list[str]:
        """Lines redacted as one text (a key may span them), split again."""
        if not self.patterns or not lines:
            return lines
        joined = "\n".join(lines)
        redacted = self.redact(joined)
        return lines if redacted == joined else redacted.split("\n")

    def value(self, value: Any) -> Any:
        """A copy of a log value (an item's ``info``) with every string redacted; a list of strings is
        redacted as lines."""
        if not self.patterns:
            return value
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            if value and all(isinstance(item, str) for item in value):
                return self.lines(list(value))
            return [self.value(item) for item in value]
        return value


WORD_KEYS = frozenset({"reason", "by", "kind", "type", "source", "end", "note", "settlement"})
"""The keys of an item's ``info`` (:mod:`.items` lists them by kind) whose values the outputs branch on:
the log's words (a turn's end reason, who aborted it, an attempt failure's kind, a block's type, a
context's source kind) and the builder's own (``end``, ``note``). Their value stays as the log has it, for
the outputs to look up; where the redactor changes it, the redacted value is what every output *shows*
(:data:`~.items.SHOWN`, read through :func:`~.items.shown`) — an unknown word, and a known one a user
pattern matches, alike. Every other string in ``info`` is the log's text and is redacted in place
(``parts`` and ``todos`` by their own rules, a todo's ``status`` kept as the log has it)."""

def redact_items(items: Sequence[Any], redactor: Redactor) -> None:
    """Redact, in place, the ``(item, times)`` pairs one event produced (:mod:`.builder`): each streamed
    block's fragments as one text (a block's items all come from one settlement), every other item's
    ``info`` text and ``marker``. Fragment counts and times are unchanged."""
    if not redactor:
        return
    flat: list[Any] = []
    for item, _ in items:
        flat.extend(item.region.parts if item.region is not None else (item,))
    by_block: dict[Any, list[Any]] = {}
    for index, item in enumerate(flat):
        if item.kind in STREAMED_KINDS and item.info is None:
            by_block.setdefault(item.block_key if item.block_key is not None else ("item", index), []).append(item)
        elif item.info is not None:
            item.info = _redacted_info(item.info, redactor)
        if item.marker is not None:
            item.marker = redactor.redact(item.marker)
    for members in by_block.values():
        pieces = [piece for item in members for piece in _pieces(item)]
        redacted = redactor.redact_pieces(pieces)
        if redacted is pieces:
            continue
        at = 0
        for item in members:
            count = item.count
            if item.fragments is not None:
                item.fragments = redacted[at : at + count]
            else:
                item.text = redacted[at]
            at += count


def _pieces(item: Any) -> list[str]:
    return list(item.fragments) if item.fragments is not None else [item.text or ""]


def _redacted_info(info: dict, redactor: Redactor) -> dict:
    out = dict(info)
    shown: dict = {}
    for key, value in info.items():
        if key in WORD_KEYS:
            redacted = redactor.value(value)
            if redacted != value:
                shown[key] = redacted
        elif key == "parts" and isinstance(value, list):  # one per block, each may hold line feeds: as many back
            out[key] = [redactor.redact(part) if isinstance(part, str) else part for part in value]
        elif key == "todos" and isinstance(value, list):
            out[key] = [{name: field if name == "status" else redactor.value(field) for name, field in todo.items()}
                        if isinstance(todo, dict) else redactor.value(todo) for todo in value]
        else:
            out[key] = redactor.value(value)
    if shown:
        out[SHOWN] = shown
    return out
