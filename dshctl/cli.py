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
    help="Look inside dsh (deepseek-harness) session logs: stats, replay, validate, images.",
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dshctl {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
    no_color: bool = typer.Option(False, "--no-color", help="No colour in tables (NO_COLOR is honoured too)."),
) -> None:
    from .output import color_wanted

    ctx.obj = {"color": color_wanted(no_color)}


def _color(ctx: typer.Context) -> bool:
    """The colour decision of this invocation, made once in :func:`main_options`."""
    return bool(ctx.obj and ctx.obj.get("color"))


def _finish(body) -> None:
    from .output import run

    status = run(body)
    if status:
        raise typer.Exit(status)


def _format(json_flag: bool, ndjson_flag: bool) -> str:
    if json_flag and ndjson_flag:
        from .errors import UsageError

        raise UsageError("--json and --ndjson are mutually exclusive")
    return "json" if json_flag else "ndjson" if ndjson_flag else "table"


@app.command()
def cat(
    path: str = typer.Argument(..., help="Log file, session directory, or - for stdin."),
    type_glob: Optional[List[str]] = typer.Option(None, "--type", help="Only events whose type matches this glob (repeatable)."),
    turn: Optional[int] = typer.Option(None, "--turn", help="Only events of this turn number."),
    expand: bool = typer.Option(False, "--expand", help="Emit every stream member as its own timed-chunk line."),
    raw: bool = typer.Option(False, "--raw", help="Pass the decompressed physical lines through unchanged."),
    strict: bool = typer.Option(False, "--strict", help="A torn tail or dropped damaged tail is an error."),
) -> None:
    """Print the normalized events as NDJSON, one per line, compact streams embedded."""
    from .cat import run_cat

    _finish(lambda: run_cat(path, type_globs=type_glob or [], turn=turn, expand=expand, raw=raw, strict=strict))


@app.command("ls")
def ls_(
    ctx: typer.Context,
    root: Optional[str] = typer.Argument(None, help="Sessions root (default $DSH_HOME/sessions, else ~/.dsh/sessions)."),
    json_out: bool = typer.Option(False, "--json", help="One JSON document."),
    ndjson_out: bool = typer.Option(False, "--ndjson", help="One JSON object per session."),
) -> None:
    """List the sessions under a sessions root: id, cwd, created, generation, size, title."""
    from .ls import run_ls

    _finish(lambda: run_ls(root, output=_format(json_out, ndjson_out), color=_color(ctx)))


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
    since: Optional[str] = typer.Option(None, "--since", help="Only sessions created at or after this date/time (ISO 8601)."),
    until: Optional[str] = typer.Option(None, "--until", help="Only sessions created before this date/time (ISO 8601)."),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", help="Worker processes for many logs (default: by core count)."),
    strict: bool = typer.Option(False, "--strict", help="A torn tail is an error."),
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
            paths or [],
            by=by.value,
            output=_format(json_out, ndjson_out),
            since=since,
            until=until,
            jobs=jobs,
            strict=strict,
            color=_color(ctx),
            tz=tz,
            prices=prices,
            cost=not no_cost,
            sort=sort,
            top=top,
            reverse=reverse,
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
) -> None:
    """Strict checks at dsh's durable boundaries, for CI. Exit 0 clean, 1 findings, 2 unreadable."""
    from .validate import run_validate

    _finish(
        lambda: run_validate(
            paths or [],
            output_format=output_format.value,
            strict=strict,
            max_errors=max_errors,
            ignore=ignore or [],
            list_rules=list_rules,
            jobs=jobs,
            color=_color(ctx),
        )
    )


@app.command()
def images(
    ctx: typer.Context,
    path: str = typer.Argument(..., help="Log file, session directory, or - for stdin."),
    json_out: bool = typer.Option(False, "--json", help="One JSON document (the listing, or the manifest with --out)."),
    ndjson_out: bool = typer.Option(False, "--ndjson", help="One JSON object per image."),
    out: Optional[Path] = typer.Option(None, "--out", help="Extract the images into this directory."),
    store: Optional[Path] = typer.Option(None, "--store", help="Attachment store (default $DSH_HOME/attachments, else ~/.dsh/attachments), or an export's media/ dir."),
    name_template: Optional[str] = typer.Option(None, "--name-template", help="Output file name template: {seq} {n} {ext} {hash} {name}."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing output files."),
    all_refs: bool = typer.Option(False, "--all", help="Write every reference, not each distinct image once."),
) -> None:
    """List the image references of a session; with --out, extract and verify them."""
    from .images import run_images

    _finish(
        lambda: run_images(
            path,
            output=_format(json_out, ndjson_out),
            out=out,
            store=store,
            name_template=name_template,
            force=force,
            all_refs=all_refs,
            color=_color(ctx),
        )
    )


class CastVersion(str, Enum):
    v2 = "2"
    v3 = "3"


@app.command()
def replay(
    ctx: typer.Context,
    path: str = typer.Argument(..., help="Log file, session directory, or - for stdin."),
    speed: float = typer.Option(1.0, "--speed", help="Playback speed multiplier."),
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
) -> None:
    """Replay what the user saw, at the recorded token timing."""
    from .replay import run_replay

    _finish(
        lambda: run_replay(
            path,
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
            color=_color(ctx),
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


if __name__ == "__main__":  # pragma: no cover
    main()
