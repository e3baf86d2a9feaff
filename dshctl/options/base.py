"""The options base: how an option is declared, the frozen options object, and the rules every command
shares.

Each command has one options type (:mod:`dshctl.options`); its fields are named after the command's
long options (``--max-count`` → ``max_count``; ``--from`` and ``--in``, Python keywords, → ``from_``
and ``in_``) and listed in the order ``--help`` shows them. A field is declared once, as an
:class:`Option` holding its default, its flags and its help; the command line (:mod:`dshctl.cli`) builds
its typer options from those declarations, and a program builds the same object::

    GrepOptions(ignore_case=True, context=2)

The constructor checks the whole object once (``__post_init__``) and raises
:class:`~dshctl.errors.UsageError` with the message the command prints; the object is immutable
afterwards (:meth:`Options.replace` makes a checked copy).

The shared options are declared here once (:data:`NO_COLOR`, :data:`LATEST`, :data:`PROJECT`,
:data:`SINCE`, :data:`UNTIL`, :data:`JOBS`, :data:`TZ`, …); a command whose wording differs says only that
(:meth:`Option.with_help`). The rules that tie options together are written here once too and apply to
every options type that has the options they name (:meth:`Options.__post_init__`).
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Iterable, dataclass_transform

from ..errors import UsageError


class Option:
    """One option's declaration: its default, its flags (``-j``, ``--jobs``), its ``--help`` text.

    ``choices``: the values it takes (the command line lists them). ``follows``: False for an option
    that has no meaning for one log followed (``--follow`` refuses it). ``metavar``: the placeholder
    ``--help`` shows for its value. ``convert``: applied to a value given (``Path``: a program may pass
    a ``str``). A tuple default makes it repeatable (``--type A --type B``)."""

    __slots__ = ("default", "flags", "help", "metavar", "choices", "follows", "convert")

    def __init__(
        self,
        default: Any,
        *flags: str,
        help: str,
        metavar: str | None = None,
        choices: tuple | None = None,
        follows: bool = True,
        convert: Callable[[Any], Any] | None = None,
    ) -> None:
        self.default, self.flags, self.help, self.metavar = default, flags, help, metavar
        self.choices, self.follows, self.convert = choices, follows, convert

    @property
    def long(self) -> str:
        """The long flag, as messages name the option: ``--jobs``."""
        return next(flag for flag in reversed(self.flags) if flag.startswith("--"))

    @property
    def named(self) -> str:
        """Every flag, as the messages about a short-and-long option name it: ``-j/--jobs``."""
        return "/".join(self.flags)

    @property
    def repeatable(self) -> bool:
        return isinstance(self.default, tuple)

    def with_help(self, help: str) -> Any:
        """The same option (flags, default, rules) with a command's own ``--help`` text."""
        return Option(
            self.default, *self.flags, help=help, metavar=self.metavar, choices=self.choices, follows=self.follows, convert=self.convert
        )


def option(default: Any, *flags: str, **settings: Any) -> Any:
    """Declare an option field (see :class:`Option`); typed ``Any`` so that ``jobs: int | None =
    option(None, "-j", "--jobs", …)`` reads as the field it declares."""
    return Option(default, *flags, **settings)


COLORS = ("auto", "always", "never")
COLOR = option(
    "auto",
    "--color",
    choices=COLORS,
    metavar="WHEN",
    help="Colour: auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR or CLICOLOR_FORCE force it), always, "
    "never; before or after the command name.",
)
NO_COLOR = option(False, "--no-color", help="The same as --color never.")
QUIET = option(False, "--quiet", help="No progress bar and no notes on standard error (warnings and errors still).")
PLAIN = option(
    False,
    "--plain",
    follows=False,
    help="Tables without borders, one row per line, columns aligned by spaces, never folded (what a pipe gets).",
)
TSV = option(False, "--tsv", follows=False, help="One table as tab-separated values: a header line, then a line per row.")
LATEST = option(
    False, "--latest", help="The most recently written session under the sessions root (with --project, of that project)."
)
PROJECT = option(
    None,
    "--project",
    metavar="DIR",
    help="With --latest: only the sessions of project DIR ('.' is the current directory), as dsh groups them: "
    "stored under DIR's project directory.",
)
PROJECT_FILTER = PROJECT.with_help(
    "Only the sessions of project DIR ('.' is the current directory), as dsh groups them: stored under DIR's "
    "project directory; with --latest, the latest of them."
)
_AGE_FORMS = "ISO 8601 date or date-time, epoch ms, an age (90m, 36h, 7d, 2w), or today, yesterday, monday…sunday, this week, last week."
SINCE = option(None, "--since", metavar="WHEN", follows=False, help=f"Only sessions created at or after this time: {_AGE_FORMS}")
UNTIL = option(None, "--until", metavar="WHEN", follows=False, help=f"Only sessions created before this time: {_AGE_FORMS}")
JOBS = option(None, "-j", "--jobs", metavar="N", follows=False, help="Worker processes for many logs (default: by core count).")
JSON = option(False, "--json", help="One JSON document.")
NDJSON = option(False, "--ndjson", help="One JSON object per record.")
STRICT = option(False, "--strict", help="A torn tail is an error.")
SALVAGE = option(False, "--salvage", help="Read past damage: every complete frame and line, each gap reported; exit 1.")
FOLLOW = option(False, "-f", "--follow", help="Keep reading as dsh writes the log.")
VERBOSE = option(False, "--verbose", "-v", help="List every warning, not a summary by kind.")
PRICES = option(None, "--prices", metavar="FILE", help="Price table (TOML) over the built-in and user ones.")
NO_COST = option(False, "--no-cost", help="No costs: no cost column, no costs keys.")
NO_CACHE = option(
    False, "--no-cache", follows=False, help="Read every log: neither use nor update the stats cache of a run over many logs."
)
TZ = option(None, "--tz", metavar="NAME", help="Time zone (IANA name such as Europe/Berlin, or UTC; default: local).")
"""One zone option, checked once (:func:`_zone`): ``stats --by day`` and ``sql``'s ``date_trunc('day', …)``
put a session on the same day when given the same ``--tz`` (both default to the local zone)."""


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(Option, option))
class Options:
    """What a command was asked for, checked: the base of every command's options type.

    ``fields`` maps each field to its :class:`Option`, in ``--help`` order. Fields are set once, by the
    constructor; derived values (the ``--since`` window in ms, the compiled filters …) are computed
    there too, so a program and the command line read the same ones."""

    fields: ClassVar[dict[str, Option]] = {}
    project_filters: ClassVar[bool] = False
    """Whether ``--project`` filters the sessions read (commands that read many) rather than only
    choosing ``--latest``."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = {name: value for name, value in vars(cls).items() if isinstance(value, Option)}
        # a class's own options first, then those of its bases (the ones every command ends with)
        inherited = {name: value for base in cls.__mro__[1:] for name, value in vars(base).get("fields", {}).items()}
        cls.fields = {**own, **{name: value for name, value in inherited.items() if name not in own}}

    def __init__(self, **fields: Any) -> None:
        declared_fields = type(self).fields
        unknown = sorted(set(fields) - set(declared_fields))
        if unknown:
            raise TypeError(f"{type(self).__name__} has no option {', '.join(unknown)} (its options: {', '.join(declared_fields)})")
        state = self.__dict__
        for name, declared in declared_fields.items():
            value = fields.get(name, declared.default)
            if declared.repeatable:
                value = _repeated(value)
            elif declared.convert is not None and value is not None:
                value = declared.convert(value)
            state[name] = value
        self.__post_init__()

    def __post_init__(self) -> None:
        """The rules every command shares (:data:`SHARED_RULES`), each applied where its options exist."""
        fields = type(self).fields
        for needs, rule in SHARED_RULES:
            if needs <= fields.keys():
                rule(self, fields)

    # -- derived values and copies

    def _derive(self, **values: Any) -> None:
        """Set values computed from the fields (in ``__post_init__``): not fields, not compared."""
        self.__dict__.update(values)

    def replace(self, **changes: Any) -> Any:
        """A copy with ``changes``, checked as a new object is."""
        return type(self)(**{**self.values(), **changes})

    def values(self) -> dict[str, Any]:
        """The fields and their values, in ``--help`` order."""
        return {name: getattr(self, name) for name in type(self).fields}

    @property
    def color_when(self) -> str:
        """``auto``, ``always`` or ``never``: ``--color``, with ``--no-color`` meaning ``never``."""
        return "never" if self.no_color else self.color

    @property
    def colored(self) -> bool:
        """Whether standard output is written in colour (:func:`dshctl.stdio.color_wanted`)."""
        from ..terminal import color_wanted

        return color_wanted(self.color_when)

    @property
    def colored_file(self) -> bool:
        """Whether a file made for a terminal (a cast) is coloured (:func:`dshctl.terminal.color_in_file`)."""
        from ..terminal import color_in_file

        return color_in_file(self.color_when)

    @property
    def table_form(self) -> str:
        """How tables are drawn: ``tsv``, ``plain``, or ``auto`` (a terminal: boxed and fitted; else plain)."""
        fields = type(self).fields
        if "tsv" in fields and self.tsv:
            return "tsv"
        return "plain" if "plain" in fields and self.plain else "auto"

    @property
    def progress(self) -> bool:
        """Whether a progress bar may be shown (on a terminal's standard error, reading for more than
        about a second): not with ``--quiet``."""
        return not getattr(self, "quiet", False)

    @property
    def output(self) -> str:
        """``json``, ``ndjson`` or ``table``: the form ``--json`` / ``--ndjson`` chose."""
        return "json" if self.json else "ndjson" if self.ndjson else "table"

    # -- a frozen value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: use .replace({name}=...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.values() == self.values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), tuple(self.values().values())))

    def __repr__(self) -> str:
        fields = type(self).fields
        given = [f"{name}={value!r}" for name, value in self.values().items() if value != fields[name].default]
        return f"{type(self).__name__}({', '.join(given)})"


class PathOptions(Options):
    """The options every command that reads PATHs ends with: which log besides PATH (``--latest``, of
    ``--project``), ``--color`` / ``--no-color`` and ``--quiet``."""

    latest: bool = LATEST
    project: str | None = PROJECT
    color: str = COLOR
    no_color: bool = NO_COLOR
    quiet: bool = QUIET


def _within_choices(options: Options, fields: dict[str, Option]) -> None:
    """A value among its option's choices; the default may be None (not given: ``--partition-by``)."""
    for name, declared in fields.items():
        value = getattr(options, name)
        if declared.choices is not None and value not in declared.choices and not (value is None and declared.default is None):
            from .suggest import not_a_choice

            raise UsageError(not_a_choice(declared.long, value, declared.choices))


def _project_with_latest(options: Any, fields: dict[str, Option]) -> None:
    """A command that reads one log takes ``--project`` only to choose ``--latest``; one that reads many
    filters its sessions by it (:attr:`Options.project_filters`)."""
    if options.project is not None and not options.latest and not options.project_filters:
        raise UsageError("--project only applies with --latest")


def _one_output(options: Any, fields: dict[str, Option]) -> None:
    if options.json and options.ndjson:
        raise UsageError("--json and --ndjson are mutually exclusive")


def _one_table_form(options: Any, fields: dict[str, Option]) -> None:
    """``--plain`` and ``--tsv`` shape a table: neither with another form, nor together."""
    chosen = [fields[name].long for name in ("plain", "tsv") if getattr(options, name)]
    if len(chosen) == 2:
        raise UsageError("--plain and --tsv are mutually exclusive")
    others = [fields[name].long for name in ("json", "ndjson", "csv") if name in fields and getattr(options, name)]
    if chosen and others:
        raise UsageError(f"{chosen[0]} shapes a table; {others[0]} prints no table: choose one")


def _strict_or_salvage(options: Any, fields: dict[str, Option]) -> None:
    if options.strict and options.salvage:
        raise UsageError("--strict refuses damage that --salvage reads past: choose one")


def _no_salvage_followed(options: Any, fields: dict[str, Option]) -> None:
    if options.follow and options.salvage:
        raise UsageError("--salvage reads past damage in a finished log; it does not apply to --follow")


def _one_log_followed(options: Any, fields: dict[str, Option]) -> None:
    """``--follow`` watches one log: the options that choose among many, or order them, have no meaning."""
    if options.follow:
        for name, declared in fields.items():
            if not declared.follows and getattr(options, name) != declared.default:
                raise UsageError(f"{declared.long} does not apply to --follow, which watches one log")


def _jobs(options: Any, fields: dict[str, Option]) -> None:
    if options.jobs is not None and options.jobs < 1:
        raise UsageError(f"{fields['jobs'].named} must be at least 1")


def _zone(options: Any, fields: dict[str, Option]) -> None:
    """``--tz`` as a zone (the local one when not given); an unknown name is refused here, before any work."""
    from ..stats.rollup import time_zone

    options._derive(zone=time_zone(options.tz))


def _window(options: Any, fields: dict[str, Option]) -> None:
    from .window import Window

    options._derive(window=Window.of(options.since, options.until))


def _no_directory_on_stdout(options: Any, fields: dict[str, Option]) -> None:
    """``--out -`` is standard output wherever a command writes a file there (``export --format otlp``);
    where ``--out`` names a directory (the command's ``out_directory`` says what it holds), ``-`` is
    refused, never made a directory named ``-``."""
    held = getattr(options, "out_directory", None)
    if held and options.out is not None and str(options.out) == "-":
        raise UsageError(f"{fields['out'].long} - is standard output, which cannot hold {held}: name a directory")


SHARED_RULES: tuple[tuple[frozenset[str], Callable[[Any, dict[str, Option]], None]], ...] = (
    (frozenset(), _within_choices),
    (frozenset({"latest", "project"}), _project_with_latest),
    (frozenset({"json", "ndjson"}), _one_output),
    (frozenset({"plain", "tsv"}), _one_table_form),
    (frozenset({"strict", "salvage"}), _strict_or_salvage),
    (frozenset({"follow", "salvage"}), _no_salvage_followed),
    (frozenset({"follow"}), _one_log_followed),
    (frozenset({"jobs"}), _jobs),
    (frozenset({"since", "until"}), _window),
    (frozenset({"tz"}), _zone),
    (frozenset({"out"}), _no_directory_on_stdout),
)
"""The rules between options, in the order they are checked: ``(the fields a rule needs, the rule)``.
A rule applies to every options type that has those fields, with one wording; a command's own rules
follow, in its ``__post_init__``. (``validate --strict`` has no ``--salvage``: the rule does not apply.)"""


def _repeated(value: Any) -> tuple:
    """A repeatable option's values as a tuple; one string is one value (not its characters)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def chosen_log(path: str | None, options: Any) -> str:
    """What a one-log command reads: PATH, or with ``--latest`` the newest session."""
    if options.latest:
        if path is not None:
            raise UsageError("give PATH or --latest, not both")
        return latest_log(options.project)
    if path is None:
        raise UsageError("missing PATH: a log file, session directory, session id, - for stdin, or --latest")
    return path


def chosen_logs(paths: Iterable[str] | None, options: Any) -> list[str]:
    """What a many-log command reads: PATHs, and the newest session with ``--latest``."""
    return [*(paths or []), *([latest_log(options.project)] if options.latest else [])]


def latest_log(project: str | None) -> str:
    from ..source import latest_session

    return str(latest_session(None, project))
