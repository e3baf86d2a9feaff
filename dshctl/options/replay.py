"""``dshctl replay`` options."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from .base import FOLLOW, NO_COST, PRICES, SALVAGE, PathOptions, option

EXPORT_SUFFIXES = (".cast", ".md", ".markdown", ".ndjson", ".jsonl", ".html", ".htm")
HTML_SUFFIXES = (".html", ".htm")
"""What ``--export FILE`` may end in: the suffix chooses the format (:mod:`dshctl.replay.export`)."""
EXPORT_FORMATS = {".cast": "cast", ".md": "md", ".markdown": "md", ".ndjson": "ndjson", ".jsonl": "ndjson", ".html": "html", ".htm": "html"}
"""``--format`` values, and the one each suffix means."""
STDOUT = "-"
"""``--export -``: standard output (the format from ``--format``)."""


class ReplayOptions(PathOptions):
    """``dshctl replay``: where to start, what to show, how fast, or which file to export.

    Derived when built: ``from_ms`` (``--from`` in ms, or None) and ``filters`` (what ``--turns``,
    ``--no-reasoning`` and ``--no-tools`` keep: a :class:`~dshctl.replay.items.Filters`)."""

    speed: float = option(1.0, "--speed", metavar="X", help="Playback speed multiplier, 1/64 (0.015625) to 2048.")
    idle_limit: float = option(2.0, "--idle-limit", metavar="S", help="Cap pauses longer than this many seconds (0 = no cap).")
    turn: int | None = option(None, "--turn", metavar="N", help="Start at this turn (the prefix is drawn at once).")
    from_: str | None = option(None, "--from", metavar="TIME", help="Start at this recorded time (seconds from the start, or mm:ss).")
    turns: str | None = option(None, "--turns", metavar="RANGE", help="Only these turns, e.g. 2-5 or 3.")
    no_reasoning: bool = option(False, "--no-reasoning", help="Hide reasoning.")
    no_tools: bool = option(False, "--no-tools", help="Hide tool calls and results.")
    instant: bool = option(False, "--instant", help="Print the transcript at once, without timing.")
    timestamps: bool = option(False, "--timestamps", help="Prefix transcript lines with recorded times.")
    export: Path | None = option(
        None, "--export", convert=Path, metavar="FILE",
        help="Write FILE.cast (asciicast), FILE.md (markdown), FILE.ndjson (timeline) or FILE.html (a self-contained "
        "replay page); - writes standard output, in the --format chosen.",
    )
    format: str | None = option(
        None, "--format", metavar="cast|md|ndjson|html",
        help="The form of --export: required with --export -; with FILE, it wins over the suffix.",
    )
    force: bool = option(False, "--force", help="Let --export overwrite an existing file.")
    cast_version: int = option(2, "--cast-version", choices=(2, 3), help="asciicast version for .cast exports.")
    cols: int | None = option(None, "--cols", metavar="N", help="Terminal width written into a .cast export (default 100).")
    rows: int | None = option(None, "--rows", metavar="N", help="Terminal height written into a .cast export (default 30).")
    redact: tuple[str, ...] = option(
        (), "--redact", metavar="REGEX",
        help="Replace every match with [redacted] before anything is shown or written, in every form (repeatable).",
    )
    redact_secrets: bool = option(
        False, "--redact-secrets",
        help="Redact API keys, bearer tokens, private keys, passwords in URLs (see the man page), in every form.",
    )
    embed_images: bool = option(
        False, "--embed-images", help="With --export FILE.html: embed the pictures the attachment store holds and verifies."
    )
    store: Path | None = option(
        None, "--store", metavar="DIR", convert=Path, help="With --embed-images: the attachment store (default: the export's media/, else $DSH_HOME/attachments)."
    )
    prices: str | None = PRICES.with_help("With --export FILE.html: price table (TOML) over the built-in and user ones, for the page's costs.")
    no_cost: bool = NO_COST.with_help("With --export FILE.html: no costs on the page.")
    salvage: bool = SALVAGE
    follow: bool = FOLLOW.with_help(
        "Watch the session as dsh writes it: a live view on a terminal, the transcript as it lands to a pipe."
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        from ..replay.player import MAX_SPEED, MIN_SPEED
        from ..replay.transform import make_filters, parse_from_time

        speed, idle_limit = self.speed, self.idle_limit
        if not MIN_SPEED <= speed <= MAX_SPEED:  # NaN fails too
            raise UsageError(f"--speed must be between 1/64 ({MIN_SPEED}) and {MAX_SPEED:g}, the player's range; got {speed:g}")
        if not idle_limit >= 0 or idle_limit == float("inf"):
            raise UsageError(f"--idle-limit must be 0 (no cap) or a positive number of seconds, got {idle_limit}")
        if self.turn is not None and self.from_ is not None:
            raise UsageError("--turn and --from both choose where to start; use one")
        if self.turn is not None and self.turn < 1:
            raise UsageError(f"--turn {self.turn}: turns are numbered from 1")
        for name in ("cols", "rows"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise UsageError(f"{self.fields[name].long} must be a positive number")
        self._derive(export_format=self._export_format())
        if self.force and (self.export is None or self.to_stdout):
            raise UsageError("--force only applies with --export FILE")
        self._check_html_options()
        filters = make_filters(no_reasoning=self.no_reasoning, no_tools=self.no_tools, turns=self.turns, redact=self.redact,
                               redact_secrets=self.redact_secrets)
        self._derive(
            from_ms=parse_from_time(self.from_) if self.from_ is not None else None, filters=filters
        )
        if self.turn is not None and not filters.keeps_turn(self.turn):
            raise UsageError(f"--turn {self.turn} is outside --turns {self.turns}")
        if self.follow and self.export is not None:
            raise UsageError("--follow shows the session as it is written; --export writes a finished one")

    @property
    def to_stdout(self) -> bool:
        """``--export -``: the export goes to standard output."""
        return self.export is not None and str(self.export) == STDOUT

    def _export_format(self) -> str | None:
        """What ``--export`` writes: ``--format``, else what the file name's suffix says."""
        formats = sorted(set(EXPORT_FORMATS.values()))
        if self.format is not None and self.format not in formats:
            raise UsageError(f"--format must be one of {', '.join(formats)}")
        if self.export is None:
            if self.format is not None:
                raise UsageError("--format chooses the form of --export; give --export FILE or --export -")
            return None
        if self.format is not None:
            return self.format
        if self.to_stdout:
            raise UsageError(f"--export - writes standard output: choose its form with --format ({', '.join(formats)})")
        suffix = Path(self.export).suffix.lower()
        if suffix not in EXPORT_FORMATS:
            raise UsageError(f"--export {self.export}: the file name must end in .cast, .md, .ndjson or .html (or give --format)")
        return EXPORT_FORMATS[suffix]

    def _check_html_options(self) -> None:
        """The options only the HTML export takes are refused with any other output."""
        used = [
            self.fields[name].long
            for name, on in (
                ("embed_images", self.embed_images),
                ("store", self.store is not None),
                ("prices", self.prices is not None),
                ("no_cost", self.no_cost),
            )
            if on
        ]
        if not used:
            return
        if self.export_format != "html":
            verb = "applies" if len(used) == 1 else "apply"
            raise UsageError(f"{' and '.join(used)} only {verb} with --export FILE.html")
        if self.store is not None and not self.embed_images:
            raise UsageError("--store only applies with --embed-images")
        if self.prices is not None and self.no_cost:
            raise UsageError(f"{self.fields['prices'].long} prices the page's costs; {self.fields['no_cost'].long} leaves them out: use one")
