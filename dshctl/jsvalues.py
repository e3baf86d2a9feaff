"""JSON values as JavaScript sees them: the number and whitespace rules dsh's codecs apply.

dsh is written in TypeScript, so what its codecs accept is decided by JavaScript semantics that Python
does not share. This module is their one home; it is a leaf (standard library only, nothing from dshctl),
so every layer — the stream records, the v0 decoder, the validator — can lean on it without a cycle.

Numbers:

* ``MAX_SAFE_INTEGER`` is ``Number.MAX_SAFE_INTEGER`` (2**53 - 1): every time, gap, index and seq dsh
  writes stays within ±this.
* JavaScript keeps the JSON literal ``-0`` as a number distinct from ``0``; Python's ``json`` makes it
  ``0``. :func:`loads_strict` parses it as :data:`NEG_ZERO`, an ``int`` equal to 0 that can still be told
  apart (:func:`is_negative_zero`); ``-0.0`` stays a float with its sign.
* Two integer rules, kept apart on purpose because the callers differ:
  :func:`safe_int` is ``Number.isSafeInteger`` on a parsed JSON number (an integral float such as ``3.0``
  counts, a bool does not) and returns the value as an ``int``; :func:`is_plain_safe_int` accepts only a
  Python ``int`` (never a float, never a bool) — the rule of the v0 packed-row decoder, whose values
  come from msgspec, where ``3.0`` is a float dsh's writer never produces.

Whitespace: "whitespace" means JavaScript's ``\\s`` (dsh tests ``/\\S/`` and ``String.prototype.trim``):
the ECMAScript WhiteSpace and LineTerminator code points, which are TAB, LF, VT, FF, CR, SPACE, U+00A0,
U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and U+FEFF. This is *not* Python's
``str.isspace``: Python also counts U+001C–U+001F and U+0085, and does not count U+FEFF.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = [
    "MAX_SAFE_INTEGER",
    "NEG_ZERO",
    "NOT_JSON",
    "JS_WHITESPACE",
    "NON_WHITESPACE",
    "loads_strict",
    "safe_int",
    "is_plain_safe_int",
    "is_negative_zero",
    "safe_index",
    "is_lossless_json",
    "has_non_whitespace",
]

MAX_SAFE_INTEGER = 2**53 - 1
"""JavaScript's ``Number.MAX_SAFE_INTEGER``; dsh requires every time, gap and index within ±this."""

NOT_JSON = (ValueError, RecursionError)
"""What a JSON decoder (msgspec's, whose ``DecodeError`` is a ``ValueError``, or ``json``'s) raises for text
dshctl does not take as JSON. A value nested deeper than the decoder's recursion limit (Python's, about
1000 levels) raises ``RecursionError``: such a line is not JSON to dshctl, an unparsable record like any
other, although JavaScript's ``JSON.parse`` would read it (dsh itself never writes one so deep)."""


# --------------------------------------------------------------------------------------------------
# Negative zero and strict parsing


class _NegativeZero(int):
    """The JSON literal ``-0``: equal to 0 for arithmetic, but distinguishable (JavaScript keeps -0)."""

    def __repr__(self) -> str:
        return "NEG_ZERO"


NEG_ZERO = _NegativeZero(0)
"""What ``loads_strict`` yields for the JSON text ``-0``."""


def _parse_int(literal: str) -> int:
    return NEG_ZERO if literal == "-0" else int(literal)


def _refuse_constant(literal: str) -> float:
    raise ValueError(f"{literal} is not JSON")


def loads_strict(text: str | bytes) -> Any:
    """Parse JSON keeping what JavaScript would see: ``-0`` → ``NEG_ZERO``, ``-0.0`` stays ``-0.0``.

    NaN and Infinity literals (accepted by Python's ``json`` but not JSON) are refused.
    """
    return json.loads(text, parse_int=_parse_int, parse_constant=_refuse_constant)


def is_negative_zero(value: Any) -> bool:
    """``NEG_ZERO`` or the float ``-0.0``."""
    return value.__class__ is _NegativeZero or (value.__class__ is float and value == 0 and math.copysign(1.0, value) < 0)


# --------------------------------------------------------------------------------------------------
# Safe integers


def safe_int(value: Any) -> int | None:
    """The value as an int if JavaScript's ``Number.isSafeInteger`` accepts it, else None.

    An integral float (``3.0``) counts, as it does in JSON/JS; a bool is not a number.
    """
    cls = value.__class__
    if cls is int or cls is _NegativeZero:
        return int(value) if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else None
    if cls is float:
        if value.is_integer() and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return int(value)
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value) if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else None
    return None


def is_plain_safe_int(value: Any) -> bool:
    """A Python ``int`` (not a bool, not a float, however integral) within ±``MAX_SAFE_INTEGER``."""
    return isinstance(value, int) and not isinstance(value, bool) and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


def safe_index(value: Any) -> int | None:
    """A non-negative safe integer that is not -0, as dsh's ``safeIndex`` requires."""
    if is_negative_zero(value):
        return None
    index = safe_int(value)
    return index if index is not None and index >= 0 else None


# --------------------------------------------------------------------------------------------------
# Lossless JSON


def is_lossless_json(value: Any) -> bool:
    """Whether the value survives a JSON round trip in JavaScript unchanged (dsh ``isJsonValue``).

    Refuses non-finite numbers and -0 anywhere, non-string keys and non-JSON types.
    """
    pending = [value]
    while pending:
        current = pending.pop()
        cls = current.__class__
        if cls is str or cls is int or cls is bool or current is None:
            continue
        if cls is float:
            if not math.isfinite(current) or (current == 0 and math.copysign(1.0, current) < 0):
                return False
            continue
        if cls is dict:
            for key in current:
                if key.__class__ is not str:
                    return False
            pending.extend(current.values())
            continue
        if cls is list:
            pending.extend(current)
            continue
        # NEG_ZERO, tuples, sets, arbitrary objects
        return False
    return True


# --------------------------------------------------------------------------------------------------
# Whitespace


JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""The code points JavaScript's ``\\s`` matches (ECMAScript WhiteSpace + LineTerminator)."""

NON_WHITESPACE = re.compile("[^" + re.escape(JS_WHITESPACE) + "]")
"""Matches one character JavaScript's ``\\S`` matches; ``NON_WHITESPACE.search`` is ``/\\S/.test``."""


def has_non_whitespace(text: Any) -> bool:
    """JavaScript's ``/\\S/.test(text)`` for a string; a non-string (malformed input) counts as no text."""
    return text.__class__ is str and NON_WHITESPACE.search(text) is not None
