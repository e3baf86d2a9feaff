"""``dshctl grep`` options."""

from __future__ import annotations

from typing import Any

from ..errors import UsageError
from .base import JOBS, JSON, NDJSON, PROJECT_FILTER, SINCE, UNTIL, PathOptions, option

class GrepOptions(PathOptions):
    """``dshctl grep``: how PATTERN matches, what is searched, and what is printed of each hit.

    Three things can be asked for (:attr:`mode`): the hits (``hits``), the logs with a hit
    (``files``, ``-l``), the matching lines counted per log (``counts``, ``-c``)."""

    regexp: tuple[str, ...] = option(
        (), "-e", "--regexp", metavar="PATTERN",
        help="A pattern to look for (repeatable: a line matching any of them is a hit); PATTERN is then read as a PATH.",
    )
    fixed_strings: bool = option(False, "-F", "--fixed-strings", help="PATTERN is a fixed string, not a regular expression.")
    ignore_case: bool = option(False, "-i", "--ignore-case", help="Ignore case.")
    smart_case: bool = option(
        False, "-S", "--smart-case", help="Smart case: ignore case unless PATTERN has an upper-case letter outside an escape; -i wins."
    )
    word_regexp: bool = option(False, "-w", "--word-regexp", help="Only matches that neither start nor end inside a word.")
    invert_match: bool = option(
        False, "-v", "--invert-match", help="The lines that do not match, of the kinds searched (--in), as ripgrep's -v."
    )
    in_: tuple[str, ...] = option(
        (),
        "--in",
        metavar="KINDS",
        help="Search only these kinds (comma-separated or repeated): user,assistant,reasoning,tool-call,tool-result,title (the default: all of these), context (harness-injected messages: runtime snapshots, instructions; only when named).",
    )
    files_with_matches: bool = option(False, "-l", "--files-with-matches", help="Print only the path of each log with a hit.")
    count: bool = option(
        False, "-c", "--count", help="Print the number of matching lines of each log with a hit (PATH:COUNT), as ripgrep counts."
    )
    max_count: int | None = option(None, "-m", "--max-count", metavar="N", help="Stop reading a log after its N-th matching line.")
    only_matching: bool = option(False, "-o", "--only-matching", help="Print only the matched parts, one per line (the lines form).")
    line_number: bool = option(
        False, "-n", "--line-number",
        help="Each line's number in its block (the message's text) after the kind: ID:TURN:STEP:KIND:N:LINE (ripgrep's -n). Off by default.",
    )
    no_line_number: bool = option(False, "-N", "--no-line-number", help="No line numbers (the default; ripgrep's -N).")
    heading: bool = option(
        False, "--heading",
        help="With several logs: each log's path once, on a line of its own above its hits (the default on a terminal, as ripgrep).",
    )
    no_heading: bool = option(
        False, "--no-heading", help="With several logs: the path at the start of every hit line (the default into a pipe or file)."
    )
    after_context: int | None = option(None, "-A", "--after-context", metavar="N", help="Show N lines of the block after each matching line.")
    before_context: int | None = option(None, "-B", "--before-context", metavar="N", help="Show N lines of the block before each matching line.")
    context: int = option(0, "-C", "--context", metavar="N", help="Show N lines of the block around each matching line (-A and -B win on their side).")
    json: bool = JSON
    ndjson: bool = NDJSON.with_help("One JSON object per hit (with -l/-c: per log).")
    since: str | int | None = SINCE
    until: str | int | None = UNTIL
    jobs: int | None = JOBS
    project: str | None = PROJECT_FILTER
    verbose: bool = option(
        False, "--verbose", help="List every warning, not a summary by kind (no -v: -v is --invert-match)."
    )

    project_filters = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.files_with_matches and self.count:
            raise UsageError("-l/--files-with-matches and -c/--count are mutually exclusive")
        if self.max_count is not None and self.max_count < 0:
            raise UsageError("-m/--max-count must be at least 0")
        for name in ("context", "after_context", "before_context"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise UsageError(f"{self.fields[name].named} must be at least 0")
        if self.line_number and self.no_line_number:
            raise UsageError("-n/--line-number prints line numbers and -N/--no-line-number none: choose one")
        if self.heading and self.no_heading:
            raise UsageError("--heading puts each log's path above its hits and --no-heading on every line: choose one")
        if self.only_matching and self.invert_match:
            raise UsageError("-o/--only-matching prints the matches and -v/--invert-match the lines without one: choose one")
        self._derive(kinds=_kinds(self.in_))

    @property
    def headings(self) -> bool:
        """Whether several logs' hits are under a heading line (their path) each: ``--heading``; else, unless
        ``--no-heading``, on a terminal (as ripgrep: a pipe's lines each carry their path, for other programs)."""
        if self.heading or self.no_heading:
            return self.heading
        from ..terminal import is_terminal

        return is_terminal()

    @property
    def mode(self) -> str:
        return "files" if self.files_with_matches else "counts" if self.count else "hits"

    @property
    def lines_wanted(self) -> int | None:
        """After how many matching lines a log is left: one is enough for ``-l``."""
        return 1 if self.files_with_matches else self.max_count

    @property
    def context_lines(self) -> int:
        """``-C``, where hits are printed (counting needs none)."""
        return max(self.around) if self.mode == "hits" else 0

    @property
    def around(self) -> tuple[int, int]:
        """How many lines before and after each matching line are shown: ``-B`` / ``-A``, else ``-C``
        (ripgrep's rule); none where only counting."""
        if self.mode != "hits":
            return 0, 0
        before = self.before_context if self.before_context is not None else self.context
        after = self.after_context if self.after_context is not None else self.context
        return before, after

    @property
    def grouped(self) -> bool:
        """The text form of the hits: runs of lines (:class:`dshctl.grep.search.Group`), not hit records."""
        return self.mode == "hits" and self.output == "table"

    def pattern(self, text: Any):
        """PATTERN compiled as these options read it, or the ``-e`` patterns with ``text`` None, or a
        list of patterns (a :func:`~dshctl.grep.pattern.compile_pattern` result passes through)."""
        from ..grep.pattern import Pattern, compile_pattern

        if isinstance(text, Pattern):
            return text
        patterns = list(self.regexp) if text is None else [text] if isinstance(text, str) else list(text)
        if not patterns:
            raise UsageError("missing PATTERN: give it first, or with -e PATTERN")
        return compile_pattern(
            patterns, fixed=self.fixed_strings, ignore_case=self.ignore_case, smart_case=self.smart_case,
            word=self.word_regexp, invert=self.invert_match,
        )


def _kinds(values: tuple[str, ...]) -> tuple[str, ...]:
    """``--in``: repeated, comma-separated, or both; none given means every kind but ``context``
    (:data:`dshctl.said.DEFAULT_KINDS`)."""
    from ..said import DEFAULT_KINDS, KINDS

    if not values:
        return DEFAULT_KINDS
    chosen = tuple(dict.fromkeys(kind.strip() for value in values for kind in value.split(",") if kind.strip()))
    unknown = [kind for kind in chosen if kind not in KINDS]
    if unknown or not chosen:
        raise UsageError(f"--in takes kinds among {', '.join(KINDS)}; got {', '.join(unknown) or 'none'}")
    return chosen
