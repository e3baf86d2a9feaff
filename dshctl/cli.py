"""The command line: one short typer function per command over the library.

Heavy modules (msgspec, zstandard, rich, the command modules) are imported inside
the functions, so ``dshctl --help`` stays fast.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from . import __version__

app = typer.Typer(
    name="dshctl",
    help="Look inside dsh (deepseek-harness) session logs: stats, grep, replay, validate, images.",
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


NO_COLOR_HELP = "No colour (NO_COLOR is honoured too); before or after the command name."
LATEST_HELP = "The most recently written session under the sessions root (with --project, of that project)."
PROJECT_HELP = "With --latest: only the sessions of project DIR ('.' is the current directory), as dsh groups them: stored under DIR's project directory."
SINCE_HELP = "Only sessions created at or after this time: ISO 8601 date or date-time, epoch ms, or an age (90m, 36h, 7d, 2w)."
UNTIL_HELP = "Only sessions created before this time: ISO 8601 date or date-time, epoch ms, or an age (90m, 36h, 7d, 2w)."
PATH_HELP = "Log file, session directory, session id or unique id prefix, or - for stdin."


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dshctl {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
    no_color: bool = typer.Option(False, "--no-color", help=NO_COLOR_HELP),
) -> None:
    from .output import color_wanted

    ctx.obj = {"color": color_wanted(no_color)}


def _color(ctx: typer.Context, no_color: bool = False) -> bool:
    """The colour decision of this invocation: made in :func:`main_options` from ``--no-color`` before
    the command and ``NO_COLOR``, and off when ``--no-color`` follows the command."""
    return bool(ctx.obj and ctx.obj.get("color")) and not no_color


def _one_log(path: Optional[str], latest: bool, project: Optional[str]) -> str:
    """What a single-log command reads: PATH, or with ``--latest`` the newest session."""
    from .errors import UsageError

    if latest:
        if path is not None:
            raise UsageError("give PATH or --latest, not both")
        return _latest(project)
    if project is not None:
        raise UsageError("--project only applies with --latest")
    if path is None:
        raise UsageError("missing PATH: a log file, session directory, session id, - for stdin, or --latest")
    return path


def _many_logs(paths: Optional[List[str]], latest: bool, project: Optional[str]) -> list[str]:
    """What a many-log command reads: PATHs, plus the newest session with ``--latest``."""
    from .errors import UsageError

    if project is not None and not latest:
        raise UsageError("--project only applies with --latest")
    return [*(paths or []), *([_latest(project)] if latest else [])]


def _latest(project: Optional[str]) -> str:
    from .source import latest_session

    return str(latest_session(None, project))


def _finish(body) -> None:
    from .interrupt import command_starts
    from .output import run

    status = run(lambda: command_starts() or body())
    if status:
        raise typer.Exit(status)


def _format(json_flag: bool, ndjson_flag: bool) -> str:
    if json_flag and ndjson_flag:
        from .errors import UsageError

        raise UsageError("--json and --ndjson are mutually exclusive")
    return "json" if json_flag else "ndjson" if ndjson_flag else "table"


@app.command()
def cat(
    ctx: typer.Context,
    path: Optional[str] = typer.Argument(None, help=PATH_HELP),
    type_glob: Optional[List[str]] = typer.Option(None, "--type", help="Only events whose type matches this glob (repeatable)."),
    turn: Optional[int] = typer.Option(None, "--turn", help="Only events of this turn number."),
    expand: bool = typer.Option(False, "--expand", help="Emit every stream member as its own timed-chunk line."),
    raw: bool = typer.Option(False, "--raw", help="Pass the decompressed physical lines through unchanged."),
    strict: bool = typer.Option(False, "--strict", help="A torn tail or dropped damaged tail is an error."),
    salvage: bool = typer.Option(False, "--salvage", help="Read past damage: every complete frame and line, each gap reported; exit 1."),
    follow: bool = typer.Option(False, "-f", "--follow", help="Keep reading as dsh writes: print each event once it is durable (Ctrl-C ends)."),
    latest: bool = typer.Option(False, "--latest", help=LATEST_HELP),
    project: Optional[str] = typer.Option(None, "--project", metavar="DIR", help=PROJECT_HELP),
    no_color: bool = typer.Option(False, "--no-color", help=NO_COLOR_HELP),
) -> None:
    """Print the normalized events as NDJSON, one per line, compact streams embedded."""
    from .cat import run_cat

    _finish(
        lambda: run_cat(
            _one_log(path, latest, project), type_globs=type_glob or [], turn=turn, expand=expand, raw=raw,
            strict=strict, salvage=salvage, follow=follow,
        )
    )


class LsSort(str, Enum):
    time = "time"
    created = "created"
    size = "size"
    title = "title"


@app.command("ls")
def ls_(
    ctx: typer.Context,
    root: Optional[str] = typer.Argument(None, help="Sessions root (default $DSH_HOME/sessions, else ~/.dsh/sessions)."),
    json_out: bool = typer.Option(False, "--json", help="One JSON document."),
    ndjson_out: bool = typer.Option(False, "--ndjson", help="One JSON object per session."),
    sort: LsSort = typer.Option(LsSort.time, "--sort", help="Order: time (last written, newest last, like ls -tr), created, size or title."),
    since: Optional[str] = typer.Option(None, "--since", help=SINCE_HELP),
    until: Optional[str] = typer.Option(None, "--until", help=UNTIL_HELP),
    project: Optional[str] = typer.Option(None, "--project", metavar="DIR", help="Only the sessions of project DIR ('.' is the current directory), as dsh groups them: stored under DIR's project directory; default: all."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every warning, not a summary by kind."),
    no_color: bool = typer.Option(False, "--no-color", help=NO_COLOR_HELP),
) -> None:
    """List the sessions under a sessions root: id, cwd, created, turns, duration, generation, size, title."""
    from .ls import run_ls

    _finish(
        lambda: run_ls(
            root, output=_format(json_out, ndjson_out), sort=sort.value, since=since, until=until, project=project,
            verbose=verbose, color=_color(ctx, no_color),
        )
    )


class By(str, Enum):
    session = "session"
    turn = "turn"
    step = "step"
    day = "day"
    week = "week"
    month = "month"
    project = "project"
    model = "model"
    tool = "tool"


@app.command()
def stats(
    ctx: typer.Context,
    paths: Optional[List[str]] = typer.Argument(None, help="Logs, session directories or sessions roots (default: the sessions root)."),
    by: By = typer.Option(
        By.session, "--by", help="Which table: per session, turn or step; or a rollup per day, ISO week, month, project (cwd), model or tool."
    ),
    json_out: bool = typer.Option(False, "--json", help="One JSON document."),
    ndjson_out: bool = typer.Option(False, "--ndjson", help="One record per session, turn or step, with a kind field."),
    since: Optional[str] = typer.Option(None, "--since", help=SINCE_HELP),
    until: Optional[str] = typer.Option(None, "--until", help=UNTIL_HELP),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", help="Worker processes for many logs (default: by core count)."),
    strict: bool = typer.Option(False, "--strict", help="A torn tail is an error."),
    salvage: bool = typer.Option(False, "--salvage", help="Read past damage: every complete frame and line, each gap reported; exit 1."),
    follow: bool = typer.Option(False, "-f", "--follow", help="Watch one log as dsh writes it: a live summary on a terminal, a record per completed turn to a pipe."),
    latest: bool = typer.Option(False, "--latest", help=LATEST_HELP),
    project: Optional[str] = typer.Option(None, "--project", metavar="DIR", help=PROJECT_HELP),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every warning, not a summary by kind."),
    no_color: bool = typer.Option(False, "--no-color", help=NO_COLOR_HELP),
    tz: Optional[str] = typer.Option(None, "--tz", help="Time zone of day/week/month rollups (IANA name; default: local)."),
    prices: Optional[str] = typer.Option(None, "--prices", help="Price table (TOML) over the built-in and user ones."),
    no_cost: bool = typer.Option(False, "--no-cost", help="No costs: no cost column, no costs keys."),
    sort: Optional[str] = typer.Option(None, "--sort", help="Sort rows by this key, largest first (cost = costs.total)."),
    top: Optional[int] = typer.Option(None, "--top", help="Only the first N rows (totals still count all)."),
    reverse: bool = typer.Option(False, "--reverse", help="Smallest first (or the default order reversed)."),
) -> None:
    """Turns, steps, TTFT, decode speed, tokens, tool time, retries and cost, computed as dsh computes them."""
    from .stats import run_stats

    _finish(
        lambda: run_stats(
            _many_logs(paths, latest, project),
            by=by.value,
            output=_format(json_out, ndjson_out),
            since=since,
            until=until,
            jobs=jobs,
            strict=strict,
            tz=tz,
            prices=prices,
            cost=not no_cost,
            sort=sort,
            top=top,
            reverse=reverse,
            salvage=salvage,
            verbose=verbose,
            color=_color(ctx, no_color),
            follow=follow,
        )
    )


class _PlainUsage(typer.core.TyperCommand):
    """Usage as every other command writes it (``PATTERN``): typer braces required arguments (``{PATTERN}``)."""

    def collect_usage_pieces(self, ctx) -> list[str]:
        return [piece.removeprefix("{").removesuffix("}") for piece in super().collect_usage_pieces(ctx)]


@app.command(cls=_PlainUsage)
def grep(
    ctx: typer.Context,
    pattern: str = typer.Argument(..., metavar="PATTERN", help="A Python regular expression (with -F, a fixed string)."),
    paths: Optional[List[str]] = typer.Argument(None, metavar="[PATH]...", help="Logs, session directories or sessions roots (default: the sessions root)."),
    fixed: bool = typer.Option(False, "-F", "--fixed-strings", help="PATTERN is a fixed string, not a regular expression."),
    ignore_case: bool = typer.Option(False, "-i", "--ignore-case", help="Ignore case."),
    smart_case: bool = typer.Option(False, "-S", "--smart-case", help="Smart case: ignore case unless PATTERN has an upper-case letter outside an escape; -i wins."),
    word: bool = typer.Option(False, "-w", "--word-regexp", help="Only matches that neither start nor end inside a word."),
    kinds: Optional[List[str]] = typer.Option(None, "--in", help="Search only these kinds (comma-separated or repeated): user,assistant,reasoning,tool-call,tool-result,title."),
    files_with_matches: bool = typer.Option(False, "-l", "--files-with-matches", help="Print only the path of each log with a hit."),
    count: bool = typer.Option(False, "-c", "--count", help="Print the number of matching lines of each log with a hit (PATH:COUNT), as ripgrep counts."),
    max_count: Optional[int] = typer.Option(None, "-m", "--max-count", help="Stop reading a log after its N-th matching line."),
    context: int = typer.Option(0, "-C", "--context", help="Show N lines of the block around each matching line."),
    json_out: bool = typer.Option(False, "--json", help="One JSON document."),
    ndjson_out: bool = typer.Option(False, "--ndjson", help="One JSON object per hit (with -l/-c: per log)."),
    since: Optional[str] = typer.Option(None, "--since", help=SINCE_HELP),
    until: Optional[str] = typer.Option(None, "--until", help=UNTIL_HELP),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", help="Worker processes for many logs (default: by core count)."),
    latest: bool = typer.Option(False, "--latest", help=LATEST_HELP),
    project: Optional[str] = typer.Option(None, "--project", metavar="DIR", help=PROJECT_HELP),
    no_color: bool = typer.Option(False, "--no-color", help=NO_COLOR_HELP),
) -> None:
    """Find what was said: prompts, answers, reasoning, tool calls and results, titles. Exit 0 hit, 1 none, 2 error."""
    from .grep.run import run_grep

    _finish(
        lambda: run_grep(
            pattern,
            _many_logs(paths, latest, project),
            fixed=fixed,
            ignore_case=ignore_case,
            smart_case=smart_case,
            word=word,
            kinds=kinds or [],
            files_with_matches=files_with_matches,
            count=count,
            max_count=max_count,
            context=context,
            output=_format(json_out, ndjson_out),
            since=since,
            until=until,
            jobs=jobs,
            color=_color(ctx, no_color),
        )
    )


class ValidateFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    junit = "junit"


@app.command()
def validate(
    ctx: typer.Context,
    paths: Optional[List[str]] = typer.Argument(None, help="Logs, session directories or sessions roots (default: the sessions root)."),
    output_format: ValidateFormat = typer.Option(ValidateFormat.text, "--format", help="Findings as text, json, sarif (2.1.0) or junit (XML)."),
    strict: bool = typer.Option(False, "--strict", help="Warnings and torn tails fail too."),
    max_errors: Optional[int] = typer.Option(None, "--max-errors", help="Stop reporting a log after N error findings."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Skip a rule id or a whole level (repeatable)."),
    list_rules: bool = typer.Option(False, "--list-rules", help="List every rule: id, level, what it checks, dsh source."),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", help="Worker processes for many logs (default: by core count)."),
    latest: bool = typer.Option(False, "--latest", help=LATEST_HELP),
    project: Optional[str] = typer.Option(None, "--project", metavar="DIR", help=PROJECT_HELP),
    no_color: bool = typer.Option(False, "--no-color", help=NO_COLOR_HELP),
) -> None:
    """Strict checks at dsh's durable boundaries, for CI. Exit 0 clean, 1 findings, 2 unreadable."""
    from .validate import run_validate

    _finish(
        lambda: run_validate(
            _many_logs(paths, latest, project),
            output_format=output_format.value,
            strict=strict,
            max_errors=max_errors,
            ignore=ignore or [],
            list_rules=list_rules,
            jobs=jobs,
            color=_color(ctx, no_color),
        )
    )


@app.command()
def images(
    ctx: typer.Context,
    path: Optional[str] = typer.Argument(None, help=PATH_HELP),
    json_out: bool = typer.Option(False, "--json", help="One JSON document (the listing, or the manifest with --out)."),
    ndjson_out: bool = typer.Option(False, "--ndjson", help="One JSON object per image."),
    out: Optional[Path] = typer.Option(None, "--out", help="Extract the images into this directory."),
    store: Optional[Path] = typer.Option(None, "--store", help="Attachment store (default $DSH_HOME/attachments, else ~/.dsh/attachments), or an export's media/ dir."),
    name_template: Optional[str] = typer.Option(None, "--name-template", help="Output file name template; fields {seq} {n} {turn} {step} {ext} {hash} {name}, integers padded as {seq:06}."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing output files."),
    all_refs: bool = typer.Option(False, "--all", help="Write every reference, not each distinct image once."),
    latest: bool = typer.Option(False, "--latest", help=LATEST_HELP),
    project: Optional[str] = typer.Option(None, "--project", metavar="DIR", help=PROJECT_HELP),
    no_color: bool = typer.Option(False, "--no-color", help=NO_COLOR_HELP),
) -> None:
    """List the image references of a session; with --out, extract and verify them."""
    from .images import run_images

    _finish(
        lambda: run_images(
            _one_log(path, latest, project),
            output=_format(json_out, ndjson_out),
            out=out,
            store=store,
            name_template=name_template,
            force=force,
            all_refs=all_refs,
            color=_color(ctx, no_color),
        )
    )


class CastVersion(str, Enum):
    v2 = "2"
    v3 = "3"


@app.command()
def replay(
    ctx: typer.Context,
    path: Optional[str] = typer.Argument(None, help=PATH_HELP),
    speed: float = typer.Option(1.0, "--speed", help="Playback speed multiplier, 1/64 (0.015625) to 2048."),
    idle_limit: float = typer.Option(2.0, "--idle-limit", help="Cap pauses longer than this many seconds (0 = no cap)."),
    turn: Optional[int] = typer.Option(None, "--turn", help="Start at this turn (the prefix is drawn at once)."),
    from_time: Optional[str] = typer.Option(None, "--from", help="Start at this recorded time (seconds from the start, or mm:ss)."),
    turns: Optional[str] = typer.Option(None, "--turns", help="Only these turns, e.g. 2-5 or 3."),
    no_reasoning: bool = typer.Option(False, "--no-reasoning", help="Hide reasoning."),
    no_tools: bool = typer.Option(False, "--no-tools", help="Hide tool calls and results."),
    instant: bool = typer.Option(False, "--instant", help="Print the transcript at once, without timing."),
    timestamps: bool = typer.Option(False, "--timestamps", help="Prefix transcript lines with recorded times."),
    export: Optional[Path] = typer.Option(None, "--export", help="Write FILE.cast (asciicast), FILE.md (markdown) or FILE.ndjson (timeline)."),
    force: bool = typer.Option(False, "--force", help="Let --export overwrite an existing file."),
    cast_version: CastVersion = typer.Option(CastVersion.v2, "--cast-version", help="asciicast version for .cast exports."),
    cols: Optional[int] = typer.Option(None, "--cols", help="Terminal width written into a .cast export (default 100)."),
    rows: Optional[int] = typer.Option(None, "--rows", help="Terminal height written into a .cast export (default 30)."),
    salvage: bool = typer.Option(False, "--salvage", help="Read past damage: every complete frame and line, each gap reported; exit 1."),
    follow: bool = typer.Option(False, "-f", "--follow", help="Watch the session as dsh writes it: a live view on a terminal, the transcript as it lands to a pipe."),
    latest: bool = typer.Option(False, "--latest", help=LATEST_HELP),
    project: Optional[str] = typer.Option(None, "--project", metavar="DIR", help=PROJECT_HELP),
    no_color: bool = typer.Option(False, "--no-color", help=NO_COLOR_HELP),
) -> None:
    """Replay what the user saw, at the recorded token timing."""
    from .replay import run_replay

    _finish(
        lambda: run_replay(
            _one_log(path, latest, project),
            speed=speed,
            idle_limit=idle_limit,
            turn=turn,
            from_time=from_time,
            turns=turns,
            no_reasoning=no_reasoning,
            no_tools=no_tools,
            instant=instant,
            timestamps=timestamps,
            export=export,
            force=force,
            cast_version=int(cast_version.value),
            cols=cols,
            rows=rows,
            salvage=salvage,
            color=_color(ctx, no_color),
            follow=follow,
        )
    )


def main() -> None:
    """Console-script entry point. click's own output (--help, --version, usage errors) goes through
    the one error path too, so a full or closed stdout or stderr is reported, never a traceback."""
    from .output import run

    raise SystemExit(run(_click_main))


def _click_main() -> int:
    try:
        app()  # standalone mode: always ends in SystemExit
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    return 0


@app.command("prices")
def prices_(
    ctx: typer.Context,
    paths: Optional[List[str]] = typer.Argument(None, help="Logs, session directories or sessions roots whose models to list (default: every entry)."),
    prices: Optional[str] = typer.Option(None, "--prices", metavar="FILE", help="Price table (TOML) over the built-in and user ones, as in stats."),
    json_out: bool = typer.Option(False, "--json", help="One JSON document."),
    no_color: bool = typer.Option(False, "--no-color", help=NO_COLOR_HELP),
) -> None:
    """The price tables in force (built-in: generated from genai-prices) and the prices of the models in PATHs."""
    from .stats.prices_info import run_prices

    _finish(lambda: run_prices(paths or [], prices=prices, output="json" if json_out else "table", color=_color(ctx, no_color)))


if __name__ == "__main__":  # pragma: no cover
    main()
