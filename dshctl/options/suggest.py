"""The nearest real names to a mistyped one, as git suggests them (``did you mean --json?``): the option and
command errors of the command line (:mod:`dshctl.cli`) and the values of an option with choices.

A name is near when the typed text is the start of it (``--fol`` → ``--follow``), or when few edits turn
one into the other (:func:`edits`: a letter left out or two neighbours swapped cost 1, a wrong or extra
letter 2; at most 1 for a word of up to 3 letters, 2 up to 7, else 3); a single letter is near only the
names it starts. Only the nearest are offered, ties together: ``--jsn``
gets ``--json``, never ``--jobs, --json or --ndjson``. Case is ignored, and so are the leading dashes.
"""

from __future__ import annotations

from typing import Iterable

_MAX_OFFERED = 4


def nearest(typed: str, candidates: Iterable[str]) -> list[str]:
    """The candidates nearest ``typed`` (sorted), or none when none is near."""
    word = typed.lstrip("-").lower()
    if not word:
        return []
    limit = _limit(len(word))
    scored: dict[str, int] = {}
    for candidate in candidates:
        other = candidate.lstrip("-").lower()
        if len(other) < 2 and len(word) >= 2:  # a short flag (-j) is no correction of a long word
            continue
        if other.startswith(word):
            distance = 0
        elif len(word) >= 2:
            distance = edits(word, other, limit + 1)
        else:
            continue
        if distance <= limit:
            scored[candidate] = distance
    if not scored:
        return []
    least = min(scored.values())
    best = [candidate for candidate, distance in scored.items() if distance == least]
    return sorted(best)[:_MAX_OFFERED]


def did_you_mean(typed: str, candidates: Iterable[str]) -> str:
    """`` (did you mean --json?)`` for the nearest candidates, or the empty string."""
    found = nearest(typed, candidates)
    return f" (did you mean {either(found)}?)" if found else ""


def not_a_choice(flag: str, value: object, choices: Iterable[object]) -> str:
    """``--by must be one of session, turn, …, not 'sesion' (did you mean session?)``: one wording for a
    value outside an option's choices, whether the command line or a program gave it."""
    from ..textsafe import visible_line

    listed = [str(choice) for choice in choices]
    return f"{flag} must be one of {', '.join(listed)}, not {visible_line(repr(value))}{did_you_mean(str(value), listed)}"


def either(names: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _limit(length: int) -> int:
    return 1 if length <= 3 else 2 if length <= 7 else 3


def edits(typed: str, name: str, enough: int | None = None) -> int:
    """How far ``typed`` is from ``name``: the optimal-string-alignment distance with git's idea of a typo's
    cost — a letter left out (``stas`` for ``stats``) or two neighbours swapped cost 1, a letter wrong or
    one too many cost 2 — so that a shortened word stays near its name and ``name`` is not near ``time``.
    At most ``enough``: once the distance is sure to reach it, ``enough``."""
    previous = list(range(len(name) + 1))  # the letters of name before j, all left out of typed
    before: list[int] | None = None
    for i, char in enumerate(typed, 1):
        current = [2 * i] + [0] * len(name)
        for j, other in enumerate(name, 1):
            current[j] = min(current[j - 1] + 1, previous[j] + 2, previous[j - 1] + (0 if char == other else 2))
            if before is not None and j > 1 and char == name[j - 2] and typed[i - 2] == other:
                current[j] = min(current[j], before[j - 2] + 1)
        if enough is not None and min(current) >= enough:
            return enough
        before, previous = previous, current
    return previous[-1] if enough is None else min(previous[-1], enough)
