"""JSON values as dsh's validators judge them (JavaScript numbers, ``-0``, placeholders)."""

from __future__ import annotations

import re
from typing import Any

# The number rules of dsh's codecs are JavaScript's; reuse them rather than restate them.
from dshctl.jsvalues import is_negative_zero, safe_int

_PLACEHOLDER = re.compile(r"\{\{[^{}]+\}\}")


def safe_integer(value: Any) -> bool:
    """dsh ``sessionFormatSafeInteger``: a safe integer that is not ``-0``."""
    return safe_int(value) is not None and not is_negative_zero(value)


def count(value: Any) -> bool:
    """dsh ``sessionFormatCount``: a non-negative safe integer that is not ``-0``."""
    number = safe_int(value)
    return number is not None and number >= 0 and not is_negative_zero(value)


def positive(value: Any) -> bool:
    number = safe_int(value)
    return number is not None and number > 0


def as_int(value: Any) -> int | None:
    return safe_int(value)


def finite_number(value: Any) -> bool:
    """dsh ``finiteNumberValue``: a finite number, not ``-0``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if is_negative_zero(value):
        return False
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    return True


def non_empty_str(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def is_placeholder(value: Any) -> bool:
    """A fixture placeholder such as ``{{cwd}}`` or ``{{tools}}`` (FORMAT §1.11)."""
    return isinstance(value, str) and _PLACEHOLDER.fullmatch(value) is not None


def has_placeholder(value: Any) -> bool:
    """A string holding a fixture placeholder, such as ``{{cwd}}/workspace``."""
    return isinstance(value, str) and _PLACEHOLDER.search(value) is not None


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def short(value: Any, limit: int = 60) -> str:
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    return text if len(text) <= limit else text[: limit - 3] + "..."
