"""The commands of the command line, each declared once: its name, its options type, its positional
arguments and its body (one short function over the library).

Two parsers read the same declarations: :mod:`dshctl.cli` registers every command with typer (``--help``,
completion, usage errors in dshctl's wording), and :mod:`dshctl.entry` reads the common command lines
itself (:func:`parse`), without importing typer and click — a third of the instructions of a short
``stats --json``. :func:`parse` takes only what it reads exactly as typer would and answers None for
anything else (``--help``, a usage error, an option spelled in a way it does not read); typer then parses
the command line, so every message stays typer's. Both end in :func:`start`.

This module imports nothing heavy: the commands' modules load when a command runs.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from .options import (
    CatOptions,
    ExportOptions,
    GrepOptions,
    HelpOptions,
    ImagesOptions,
    LsOptions,
    Option,
    Options,
    PricesOptions,
    ReplayOptions,
    SqlOptions,
    StatsOptions,
    ValidateOptions,
)
from .options.base import COLOR, NO_COLOR


class Argument:
    """A positional argument of a command (its options are the options type's fields). A plain class:
    a NamedTuple's class costs more to make at start-up than all of this module's parse."""

    __slots__ = ("name", "metavar", "help", "many", "required")

    def __init__(self, name: str, metavar: str, help: str, *, many: bool = False, required: bool = False) -> None:
        self.name, self.metavar, self.help = name, metavar, help
        self.many = many
        """Any number of values (``[PATH]...``): a list, None when none is given."""
        self.required = required

    def with_help(self, help: str) -> Argument:
        return Argument(self.name, self.metavar, help, many=self.many, required=self.required)


class Command:
    """A command: its name, its options type, its positional arguments in order, and its body
    (``body(*arguments, options)``, whose docstring is the command's ``--help`` text; None for ``help``,
    whose body is the typer command line's, :func:`dshctl.cli.help_`: it describes the commands typer
    holds). ``plain_usage``: usage as every other command writes it (``PATTERN``, not typer's
    ``{PATTERN}``)."""

    __slots__ = ("name", "options", "arguments", "body", "plain_usage")

    def __init__(
        self,
        name: str,
        options: type[Options],
        arguments: tuple[Argument, ...],
        body: Callable[..., int | None] | None,
        *,
        plain_usage: bool = False,
    ) -> None:
        self.name, self.options, self.arguments, self.body, self.plain_usage = name, options, arguments, body, plain_usage

    def with_body(self, body: Callable[..., int | None]) -> Command:
        return Command(self.name, self.options, self.arguments, body, plain_usage=self.plain_usage)


PATH = Argument("path", "[PATH]", "Log file, session directory, session id or unique id prefix, or - for stdin.")
PATHS = Argument("paths", "[PATH]...", "Logs, session directories or sessions roots (default: the sessions root).", many=True)


def cat(path: str | None, options: CatOptions) -> int:
    """Print the normalized events as NDJSON, one per line, compact streams embedded."""
    from .cat import run_cat

    return run_cat(path, options)


def ls_(root: str | None, options: LsOptions) -> int:
    """List the sessions under a sessions root: id, cwd, created, turns, duration, generation, size, title."""
    from .ls import run_ls

    return run_ls(root, options)


def stats(paths: list[str] | None, options: StatsOptions) -> int:
    """Turns, steps, TTFT, decode speed, tokens, tool time, retries and cost, computed as dsh computes them."""
    from .stats import run_stats

    return run_stats(paths or [], options)


def grep(pattern: str | None, paths: list[str] | None, options: GrepOptions) -> int:
    """Find what was said: prompts, answers, reasoning, tool calls and results, titles. Exit 0 hit, 1 none, 2 error."""
    from .grep.run import run_grep

    return run_grep(pattern, paths or [], options)


def validate(paths: list[str] | None, options: ValidateOptions) -> int:
    """Strict checks at dsh's durable boundaries, for CI. Exit 0 clean, 1 findings, 2 unreadable."""
    from .validate import run_validate

    return run_validate(paths or [], options)


def images(path: str | None, options: ImagesOptions) -> int:
    """List the image references of a session; with --out, extract and verify them."""
    from .images import run_images

    return run_images(path, options)


def replay(path: str | None, options: ReplayOptions) -> int:
    """Replay what the user saw, at the recorded token timing."""
    from .replay import run_replay

    return run_replay(path, options)


def export(paths: list[str] | None, options: ExportOptions) -> int:
    """Write the sessions as Parquet tables (sessions, turns, steps, tool_calls, images) or as OpenTelemetry traces."""
    from .export import run_export

    return run_export(paths or [], options)


def sql(query: str, paths: list[str] | None, options: SqlOptions) -> int:
    """Query the sessions with SQL (DuckDB, in process): the export's tables as views."""
    from .export.sql import run_sql

    return run_sql(query, paths or [], options)


def prices_(paths: list[str] | None, options: PricesOptions) -> int:
    """The price tables in force (built-in: generated from genai-prices) and the prices of the models in PATHs.

    --tsv is one table: the price rows (with PATHs, each route found joined to the rows of the price key it
    bills as); --files and --routes choose one of the other tables, in every form."""
    from .stats.prices_info import run_prices

    return run_prices(paths or [], options)


COMMANDS: tuple[Command, ...] = (
    Command("ls", LsOptions, (Argument("root", "[ROOT]", "Sessions root (default $DSH_HOME/sessions, else ~/.dsh/sessions)."),), ls_),
    Command("cat", CatOptions, (PATH,), cat),
    Command("stats", StatsOptions, (PATHS,), stats),
    Command(
        "prices",
        PricesOptions,
        (PATHS.with_help("Logs, session directories or sessions roots whose models to list (default: every entry)."),),
        prices_,
    ),
    Command(
        "grep",
        GrepOptions,
        (Argument("pattern", "PATTERN", "A Python regular expression (with -F, a fixed string); with -e, a PATH."), PATHS),
        grep,
        plain_usage=True,
    ),
    Command("replay", ReplayOptions, (PATH,), replay),
    Command("validate", ValidateOptions, (PATHS,), validate),
    Command("images", ImagesOptions, (PATH,), images),
    Command("export", ExportOptions, (PATHS,), export),
    Command(
        "sql",
        SqlOptions,
        (
            Argument("query", "QUERY", "A SQL query (DuckDB) over the tables sessions, turns, steps, tool_calls, images.", required=True),
            PATHS.with_help("Logs, session directories, sessions roots or datasets written by export (default: the sessions root)."),
        ),
        sql,
        plain_usage=True,
    ),
    Command("help", HelpOptions, (Argument("command", "[COMMAND]", "The command to describe (default: all of them)."),), None),
)
"""Every command, in the order ``dshctl --help`` lists them: the README's table (what a session holds,
then its figures and prices, finding, replaying, checking, exporting), ``help`` last."""

BY_NAME = {command.name: command for command in COMMANDS}


def start(command: Command, positional: list[Any], values: dict[str, Any]) -> int:
    """Run a parsed command line. The options object is built inside the one error path, so a refused
    combination is reported as every error is (``dshctl: error: …``, exit 2); a Ctrl-C pending from the
    start-up takes effect first (:func:`dshctl.interrupt.command_starts`), then the ``DSHCTL_*`` settings
    are checked (:func:`dshctl.settings.check`: a bad one is an error of its own, before anything is read;
    ``help`` reads none)."""
    from .interrupt import command_starts
    from .settings import check
    from .stdio import run

    body = command.body
    assert body is not None
    checked = check if command.name != "help" else _nothing
    return run(lambda: command_starts() or checked() or body(*positional, command.options(**values)))


def _nothing() -> None:
    return None


def annotation(options_type: type, field: str) -> str:
    """A field's annotation as written (``int | None``): read, not evaluated, which ``--help`` would pay for."""
    return next(vars(cls)["__annotations__"][field] for cls in options_type.__mro__ if field in vars(cls).get("__annotations__", {}))


def color_when(given: list[str]) -> str:
    """``--color`` as an invocation chose it: the last of ``--color WHEN`` and ``--no-color`` (``never``)
    noted, before or after the command name, as git and ripgrep take theirs; else ``auto``."""
    return (given or [COLOR.default])[-1]


# -- the fast parse ---------------------------------------------------------------------------------------

_GROUP = {flag: "color" for flag in COLOR.flags} | {flag: "no_color" for flag in NO_COLOR.flags}


def parse(args: list[str]) -> tuple[Command, list[Any], dict[str, Any]] | None:
    """``(command, positional arguments, option values)`` for :func:`start`, exactly as the typer command
    line builds them from ``args`` (without the program name); None where typer must parse: ``help``,
    ``--help``, ``--version``, shell completion, a usage error, ``--``, short options run together or
    glued to their value (``-j4``), an option value that starts with ``-``, a PATH-typed option, more
    than one colour flag (click notes repeated ones in an order of its own)."""
    if any(name.endswith("_COMPLETE") for name in os.environ):  # click's shell completion (_DSHCTL_COMPLETE)
        return None
    colours: list[str] = []
    at = 0
    while at < len(args) and args[at].startswith("-"):  # the group's options, before the command name
        flag, _, value = args[at].partition("=")
        field = _GROUP.get(flag)
        if field == "no_color" and "=" not in args[at]:
            colours.append("never")
        elif field == "color":
            if "=" not in args[at]:
                at += 1
                if at == len(args):
                    return None
                value = args[at]
            if value not in COLOR.choices:
                return None
            colours.append(value)
        else:
            return None
        at += 1
    command = BY_NAME.get(args[at]) if at < len(args) else None
    if command is None or command.body is None:
        return None
    read = _read_options(command.options, args[at + 1 :], colours)
    if read is None or len(colours) > 1:
        return None
    words, values = read
    positional: list[Any] = []
    for argument in command.arguments:
        if argument.many:
            positional.append(words or None)
            words = []
        elif words:
            positional.append(words.pop(0))
        elif argument.required:
            return None
        else:
            positional.append(None)
    if words:  # more than the command takes
        return None
    if "color" in values:
        values["color"], values["no_color"] = color_when(colours), False
    return command, positional, values


def _read_options(options_type: type[Options], args: list[str], colours: list[str]) -> tuple[list[str], dict[str, Any]] | None:
    """The positional words and every field's value, as typer gives them; None for anything else."""
    flags = {flag: field for field, declared in options_type.fields.items() for flag in declared.flags}
    given: dict[str, Any] = {}
    words: list[str] = []
    at = 0
    while at < len(args):
        arg = args[at]
        at += 1
        if arg == "-" or not arg.startswith("-"):
            words.append(arg)
            continue
        flag, glued, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        field = flags.get(flag)
        if field is None:
            return None
        declared = options_type.fields[field]
        kind = annotation(options_type, field)
        if kind == "bool":
            if glued:
                return None
            given[field] = True
            if field in ("color", "no_color"):
                colours.append("never")
            continue
        if not glued:
            if at == len(args) or (args[at].startswith("-") and args[at] != "-"):
                return None
            value = args[at]
            at += 1
        converted = _value(declared, kind, value)
        if converted is _REFUSED:
            return None
        if declared.repeatable:
            given[field] = (*given.get(field, ()), converted)
        else:
            given[field] = converted
        if field == "color":
            colours.append(value)
    values = {field: given[field] if field in given else _default(declared) for field, declared in options_type.fields.items()}
    return words, values


_REFUSED = object()


def _value(declared: Option, kind: str, text: str) -> Any:
    """An option's value from its text, as click converts it (``int(text)``, ``float(text)``); _REFUSED
    where typer would refuse it or convert it otherwise (a PATH-typed option)."""
    if declared.choices is not None:
        by_text = {str(choice): choice for choice in declared.choices}
        return by_text.get(text, _REFUSED)
    if declared.repeatable:
        return text
    kinds = [name.strip() for name in kind.split("|") if name.strip() != "None"]
    if "Path" in kinds:
        return _REFUSED
    try:
        return {"str": str, "int": int, "float": float}[kinds[0]](text)
    except (KeyError, ValueError):
        return _REFUSED


def _default(declared: Option) -> Any:
    """A field not given, as typer passes it: its default (a repeatable one: no values)."""
    if declared.repeatable:
        return ()
    if declared.choices is not None and declared.default is not None:
        return {str(choice): choice for choice in declared.choices}[str(declared.default)]
    return declared.default
