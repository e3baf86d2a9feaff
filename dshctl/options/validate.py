"""``dshctl validate`` options."""

from __future__ import annotations

from ..errors import UsageError
from .base import JOBS, PROJECT_FILTER, SINCE, STRICT, UNTIL, PathOptions, option

FORMATS = ("text", "json", "sarif", "junit")
"""``--format``: the renderings of :mod:`dshctl.validate.formats`."""


class ValidateOptions(PathOptions):
    """``dshctl validate``: the findings' format, what fails, what is skipped."""

    format: str = option("text", "--format", choices=FORMATS, help="Findings as text, json, sarif (2.1.0) or junit (XML).")
    strict: bool = STRICT.with_help("Warnings and torn tails fail too.")
    max_errors: int | None = option(None, "--max-errors", metavar="N", help="Stop reporting a log after N error findings.")
    ignore: tuple[str, ...] = option((), "--ignore", metavar="RULE", help="Skip a rule id or a whole level (repeatable).")
    list_rules: bool = option(False, "--list-rules", help="List every rule: id, level, what it checks, dsh source.")
    since: str | int | None = SINCE.with_help(SINCE.help.replace("Only sessions", "Only the logs of sessions"))
    until: str | int | None = UNTIL.with_help(UNTIL.help.replace("Only sessions", "Only the logs of sessions"))
    jobs: int | None = JOBS
    project: str | None = PROJECT_FILTER

    project_filters = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_errors is not None and self.max_errors < 0:
            raise UsageError("--max-errors must be 0 or more")
        self._derive(ignored=_ignored(self.ignore))


def _ignored(values: tuple[str, ...]) -> frozenset[str]:
    """``--ignore`` takes rule ids and level names (comma-separated lists allowed)."""
    from ..validate.rules import LEVELS, RULES

    out: set[str] = set()
    for item in values:
        for name in item.split(","):
            name = name.strip()
            if not name:
                continue
            if name not in RULES and name not in LEVELS:
                from .suggest import did_you_mean

                near = did_you_mean(name, [*RULES, *LEVELS])
                raise UsageError(f"--ignore: unknown rule or level {name!r}{near or ' (see dshctl validate --list-rules)'}")
            out.add(name)
    return frozenset(out)
