"""JSON values as dsh's validators judge them (JavaScript numbers, ``-0``, placeholders), in two forms.

* Predicates (``count``, ``safe_integer``, ``non_empty_str`` …) answer yes or no: the codec level
  (:mod:`.codec`) words its own findings around them.
* Their raising forms (``need_count``, ``need_non_empty_string`` …) raise :class:`PayloadError` with a
  message naming the member at fault (``"llm/retry 7 turn must be a non-negative safe integer"``): the
  payload checks (:mod:`.payload`) are written with them, and their first refusal is the finding.

Each value rule is written once, as its predicate; a raising form only words the refusal.
"""

from __future__ import annotations

import re
from typing import Any, Callable

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


def is_absolute_path(path: str) -> bool:
    """An absolute path as dsh writes one: POSIX ``/…``, a UNC ``\\\\server\\…`` or a drive ``C:\\…``."""
    return path.startswith("/") or path.startswith("\\\\") or (len(path) > 2 and path[1] == ":" and path[2] in "\\/")


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


# --------------------------------------------------------------------------- raising forms


class PayloadError(Exception):
    """A payload member dsh's admission refuses."""


def fail(label: str, what: str) -> PayloadError:
    """The refusal of the member ``label``: ``"<label> <what>"``."""
    return PayloadError(f"{label} {what}")


def need_object(value: Any, label: str) -> dict:
    if not isinstance(value, dict):
        raise fail(label, "must be a JSON object")
    return value


def need_exact_members(record: dict, required, optional=(), label: str = "") -> None:
    allowed = set(required) | set(optional)
    for key in record:
        if key not in allowed:
            raise fail(label, f'has unexpected member "{key}"')
    for key in required:
        if key not in record:
            raise fail(label, f'lacks required member "{key}"')


def need_object_with(value: Any, label: str, required, optional=()) -> dict:
    record = need_object(value, label)
    need_exact_members(record, required, optional, label)
    return record


def need_string(value: Any, label: str) -> None:
    if not isinstance(value, str):
        raise fail(label, "must be a string")


def need_non_empty_string(value: Any, label: str) -> None:
    if not non_empty_str(value):
        raise fail(label, "must be a non-empty string")


def need_boolean(value: Any, label: str) -> None:
    if not isinstance(value, bool):
        raise fail(label, "must be a boolean")


def need_count(value: Any, label: str) -> int:
    if not count(value):
        raise fail(label, "must be a non-negative safe integer")
    return int(value)


def need_safe_integer(value: Any, label: str) -> int:
    if not safe_integer(value):
        raise fail(label, "must be a safe integer")
    return int(value)


def need_positive(value: Any, label: str) -> int:
    number = need_count(value, label)
    if number == 0:
        raise fail(label, "must be positive")
    return number


def need_finite_number(value: Any, label: str) -> float:
    if not finite_number(value):
        raise fail(label, "must be a finite number")
    return value


def need_literal(value: Any, allowed: tuple, label: str) -> None:
    for candidate in allowed:
        if value is candidate or (type(value) is type(candidate) and value == candidate):
            return
        if isinstance(candidate, int) and not isinstance(candidate, bool) and isinstance(value, (int, float)) \
                and not isinstance(value, bool) and value == candidate:
            return
    raise fail(label, "must be one of " + ", ".join(str(c).lower() if isinstance(c, bool) else str(c) for c in allowed))


def need_array(value: Any, label: str, each: Callable[[Any, str], None] | None = None) -> list:
    if not isinstance(value, list):
        raise fail(label, "must be an array")
    if each is not None:
        for index, member in enumerate(value):
            each(member, f"{label}[{index}]")
    return value
