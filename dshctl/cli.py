"""The command line, with typer: every command of :mod:`dshctl.commands` (its body, arguments and
options type, declared there once), ``--help``, completion and usage errors in dshctl's wording.

A command's options are not declared here: each command's options type (:mod:`dshctl.options`) holds
them, and :func:`_command` turns its fields into the typer options, in the same order, with the same
flags, defaults and help. typer parses them; :func:`dshctl.commands.start` builds the options object
(which checks itself) and hands it, with the positional arguments, to the command's body. The common
command lines never come here: :mod:`dshctl.entry` parses them without typer (:func:`dshctl.commands.parse`).

Heavy modules (msgspec, zstandard, rich, the command modules) are imported inside the functions, so
``dshctl --help`` stays fast.
"""

from __future__ import annotations

import inspect
import sys
from enum import Enum
from pathlib import Path
from typing import Any, Callable, List, Optional

import typer

from . import commands
from .commands import COMMANDS, Argument, Command, annotation, color_when
from .options import HelpOptions, Option
from .options.base import COLOR, COLORS, NO_COLOR

class _Group(typer.core.TyperGroup):
    """The command group, whose usage errors read as every dshctl error does: one line,
    ``dshctl: error: no such option: --jsn (did you mean --json?); dshctl stats --help lists the
    options``, status 2 — not click's usage block, nor its list of every option that shares a letter."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # type: ignore[override]
        click = typer.core._click
        try:
            status = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as error:
            error.show()  # dshctl alone: the help, as before
            status = error.exit_code
        except click.exceptions.ClickException as error:
            typer.echo(_usage_error_line(error, self, sys.argv[1:] if args is None else list(args)), err=True)
            status = error.exit_code
        except _abort_type(click):
            typer.echo("dshctl: interrupted", err=True)
            status = 130
        if not standalone_mode:
            return status
        sys.exit(status if isinstance(status, int) else 0)

    def resolve_command(self, ctx, args):  # type: ignore[override]
        """A name that is no command is refused with the nearest commands (typer's own suggestion lists
        every close one, quoted, after a full stop)."""
        name = args[0] if args else None
        if name is not None and not name.startswith("-") and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            raise _NoSuchCommand(no_such_command(name, self.list_commands(ctx)), ctx)
        return super().resolve_command(ctx, args)


class _NoSuchCommand(typer.core._click.exceptions.UsageError):
    """A command name that names none: its message is already in dshctl's wording."""


def no_such_command(name: str, commands: list[str]) -> str:
    """The one refusal of a name that is no command, for ``dshctl NAME`` and ``dshctl help NAME`` alike: the
    nearest commands, else all of them, and where they are described — ``no such command: stas (did you
    mean stats?); dshctl --help lists the commands``."""
    from .options.suggest import did_you_mean
    from .textsafe import visible_line

    others = [command for command in commands if command != name]
    near = did_you_mean(name, others) or f" (the commands: {', '.join(others)})"
    return f"no such command: {visible_line(name)}{near}; dshctl --help lists the commands"


def _abort_type(click) -> type:
    """The exception click raises on end of input: typer's own vendored click keeps it in
    ``typer.exceptions`` (looking it up where it is not made every other exception, a KeyboardInterrupt
    or a watchdog's, an AttributeError)."""
    found = getattr(click.exceptions, "Abort", None) or getattr(typer.core, "Abort", None)
    return found if isinstance(found, type) else ()  # type: ignore[return-value]


def _usage_error_line(error, group, args: list[str]) -> str:
    """A click usage error in dshctl's wording, pointing at the ``--help`` of the command it was given to:
    an unknown option or command with the nearest real ones (:mod:`dshctl.options.suggest`), a value
    outside an option's choices with the nearest choice; click's other messages reworded."""
    click = typer.core._click
    ctx = getattr(error, "ctx", None)
    named = next((arg for arg in args if arg in group.commands), None)
    flag = getattr(error, "option_name", None)
    theirs = named is not None and flag is not None and any(flag in param.opts for param in group.commands[named].params)
    if theirs:
        where = f"dshctl {named}"  # an option of the command that click reports from the group's context
    elif ctx is not None:
        where = ctx.command_path
    else:
        where = f"dshctl {named}" if named is not None else "dshctl"
    if isinstance(error, _NoSuchCommand):
        return f"dshctl: error: {error.message}"
    if isinstance(error, click.exceptions.NoSuchOption):
        if theirs:  # dshctl --json stats
            return f"dshctl: error: {flag} is an option of dshctl {named}: give it after the command name; {where} --help lists the options"
        return f"dshctl: error: {_no_such_option(error)}; {where} --help lists the options"
    value = _bad_value(error, args)
    if value is not None:
        return f"dshctl: error: {value}"
    message = error.format_message().strip().rstrip(".")
    message = message[:1].lower() + message[1:]
    return f"dshctl: error: {message}; {where} --help lists the options"


def _no_such_option(error) -> str:
    """``no such option: --jsn (did you mean --json?)``: the nearest of the long options of the command it
    was given to (click's own list is every option that shares a few letters)."""
    from .options.suggest import did_you_mean
    from .textsafe import visible_line

    name = error.option_name
    near = did_you_mean(name, _long_flags(error.ctx)) if name.startswith("--") else ""
    return f"no such option: {visible_line(name)}{near}"


def _long_flags(ctx) -> list[str]:
    """The long options of the command ``ctx`` parses, ``--help`` included."""
    if ctx is None:
        return []
    flags = [flag for param in ctx.command.params if param.param_type_name == "option"
             for flag in (*param.opts, *param.secondary_opts)]
    return [flag for flag in (*flags, *ctx.help_option_names) if flag.startswith("--")]


_NUMBERS = {"int": "a whole number", "integer": "a whole number", "float": "a number"}


def _glued(param, value: str, args: list[str], ctx) -> str | None:
    """``-jsn`` read as ``-j sn``: when the short flag and its refused value were typed as one word that is
    near a long option (``--json``), say so — the long option lost a dash."""
    from .options.suggest import did_you_mean
    from .textsafe import visible_line

    shorts = [opt for opt in param.opts if len(opt) == 2 and opt.startswith("-")]
    typed = next((arg for arg in args if any(arg == short + value for short in shorts)), None)
    near = did_you_mean("-" + typed, _long_flags(ctx)) if typed is not None else ""
    return f"{visible_line(typed)}: {typed[:2]} takes {value!r} as its value{near}" if near else None


def _bad_value(error, args: list[str] = ()) -> str | None:
    """typer's refusal of an option's value in the options' own wording: outside its choices, ``--by must
    be one of session, turn, …, not 'sesion' (did you mean session?)``
    (:func:`dshctl.options.suggest.not_a_choice`); not a number, ``--top takes a whole number, not 'x'``.
    None for any other error."""
    import ast
    import re

    param = getattr(error, "param", None)
    message = getattr(error, "message", "") or ""
    if param is None or not getattr(param, "opts", None):
        return None
    flag = next((opt for opt in param.opts if opt.startswith("--")), param.opts[0])
    try:
        choice = re.fullmatch(r"(.+) is not one of (.+?)\.?", message, re.S)
        if choice is not None:
            from .options.suggest import not_a_choice

            return not_a_choice(flag, ast.literal_eval(choice.group(1)), ast.literal_eval(f"({choice.group(2)},)"))
        number = re.fullmatch(r"(.+) is not a valid (int|integer|float)\.?", message, re.S)
        if number is not None:
            from .textsafe import visible_line

            given = ast.literal_eval(number.group(1))
            refused = f"{flag} takes {_NUMBERS[number.group(2)]}, not {visible_line(repr(given))}"
            return _glued(param, str(given), args, error.ctx) or refused
    except (ValueError, SyntaxError):
        pass
    return None


app = typer.Typer(
    name="dshctl",
    cls=_Group,
    help="Look inside dsh (deepseek-harness) session logs: stats, grep, replay, validate, images, export, sql.",
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from .build import version_line

        typer.echo(version_line())
        raise typer.Exit()


_Colors = Enum("_Colors", [(when, when) for when in COLORS], type=str)  # type: ignore[misc]


_COLOUR_FLAGS = "dshctl.colour_flags"
"""``ctx.meta`` key (shared by the group's and the command's contexts): the colour flags given, in order."""


def _colour_flag_given(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
    """Note ``--color WHEN`` or ``--no-color`` given on the command line: click processes the given
    options in the order they were typed, before and after the command name, so the last one noted is
    the last one typed."""
    source = ctx.get_parameter_source(param.name)  # click's ParameterSource (typer vendors click)
    if getattr(source, "name", None) == "COMMANDLINE" and not ctx.resilient_parsing:
        when = "never" if param.name == "no_color" else getattr(value, "value", value)
        if param.name != "no_color" or value:
            ctx.meta.setdefault(_COLOUR_FLAGS, []).append(when)
    return getattr(value, "value", value)  # typer converts what a callback returns: the text, not its Enum


@app.callback()
def main_options(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
    color: _Colors = typer.Option(_Colors(COLOR.default), *COLOR.flags, help=COLOR.help, metavar=COLOR.metavar, callback=_colour_flag_given),  # type: ignore[valid-type]
    no_color: bool = typer.Option(NO_COLOR.default, *NO_COLOR.flags, help=NO_COLOR.help, callback=_colour_flag_given),
) -> None:
    ctx.obj = {}


def _color_when(ctx: typer.Context) -> str:
    """``--color`` as this invocation chose it (:func:`dshctl.commands.color_when` of the flags noted)."""
    return color_when(ctx.meta.get(_COLOUR_FLAGS) or [])


def _typer_argument(argument: Argument) -> tuple[Any, Any]:
    """A positional argument's annotation and typer declaration."""
    if argument.many:
        annotation: Any = Optional[List[str]]
    else:
        annotation = str if argument.required else Optional[str]
    return annotation, typer.Argument(... if argument.required else None, metavar=argument.metavar, help=argument.help)


def _command(spec: Command) -> Callable[..., None]:
    """Register ``spec.body(*arguments, options)`` as a command whose options are its options type's
    fields; it runs through :func:`dshctl.commands.start`, as the fast parse's does."""
    options_type = spec.options
    parameters = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)]
    for arg in spec.arguments:
        annotation, info = _typer_argument(arg)
        parameters.append(inspect.Parameter(arg.name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation))
    from_cli: dict[str, Callable[[Any], Any]] = {}
    for field, declared in options_type.fields.items():
        annotation, default, from_cli[field] = _typer_form(field, declared, _annotation(options_type, field))
        noted = {"callback": _colour_flag_given} if field in ("color", "no_color") else {}
        info = typer.Option(default, *declared.flags, help=declared.help, metavar=declared.metavar, **noted)
        parameters.append(inspect.Parameter(field, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation))

    def command(ctx: typer.Context, **given: Any) -> None:
        positional = [given.pop(arg.name) for arg in spec.arguments]
        values = {field: convert(given[field]) for field, convert in from_cli.items()}
        if "color" in values:
            values["color"], values["no_color"] = _color_when(ctx), False
        status = commands.start(spec, positional, values)
        if status:
            raise typer.Exit(status)

    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    command.__name__ = command.__qualname__ = spec.body.__name__
    command.__doc__ = spec.body.__doc__
    app.command(spec.name, **({"cls": _PlainUsage} if spec.plain_usage else {}))(command)
    return command


def _same(value: Any) -> Any:
    return value


_KINDS = {"bool": bool, "str": str, "int": int, "float": float, "Path": Path}
_annotation = annotation


def _typer_form(field: str, declared: Option, annotation: str) -> tuple[Any, Any, Callable[[Any], Any]]:
    """How typer takes a field: its annotation, its default, and how its value becomes the field's."""
    if declared.choices is not None:
        choices = Enum(f"{field}_choice", [(str(choice), str(choice)) for choice in declared.choices], type=str)  # type: ignore[misc]
        by_text = {str(choice): choice for choice in declared.choices}
        if declared.default is None:  # not given: None (``--partition-by``)
            return Optional[choices], None, lambda member: None if member is None else by_text[member.value]
        return choices, choices(str(declared.default)), lambda member: by_text[member.value]
    if declared.repeatable:
        return Optional[List[str]], None, lambda values: tuple(values or ())
    kinds = [_KINDS[name.strip()] for name in annotation.split("|") if name.strip() != "None"]
    kind = Path if Path in kinds else kinds[0]  # str | int | None (--since): the command line gives a str
    return (kind if declared.default is not None else Optional[kind]), declared.default, _same


class _PlainUsage(typer.core.TyperCommand):
    """Usage as every other command writes it (``PATTERN``): typer braces required arguments (``{PATTERN}``);
    grep's PATTERN, optional only because ``-e`` may give it, reads as the required argument it usually is."""

    def collect_usage_pieces(self, ctx) -> list[str]:
        pieces = [piece.removeprefix("{").removesuffix("}") for piece in super().collect_usage_pieces(ctx)]
        return ["PATTERN" if piece == "[PATTERN]" else piece for piece in pieces]


def help_(command: str | None, options: HelpOptions) -> int:
    """Describe a command (as 'dshctl COMMAND --help'), or list them all; the man page, man dshctl, is the reference."""
    click = typer.core._click
    group = typer.main.get_command(app)
    top = click.Context(group, info_name="dshctl", **group.context_settings)
    if command is None:
        typer.echo(group.get_help(top))
        return 0
    found = group.get_command(top, command)
    if found is None:
        from .errors import UsageError

        raise UsageError(no_such_command(command, group.list_commands(top)))
    typer.echo(found.get_help(click.Context(found, info_name=command, parent=top)))
    return 0


for _spec in COMMANDS:
    _command(_spec if _spec.body is not None else _spec.with_body(help_))


def main() -> None:
    """Console-script entry point. click's own output (--help, --version, usage errors) goes through
    the one error path too, so a full or closed stdout or stderr is reported, never a traceback."""
    from .stdio import run

    raise SystemExit(run(_click_main))


def _click_main() -> int:
    try:
        app()  # standalone mode: always ends in SystemExit
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    main()
