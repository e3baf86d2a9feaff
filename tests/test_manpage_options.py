"""man/dshctl.1 and ``--help`` name the same options.

The command line's options come from the typer app (:mod:`dshctl.cli`, whose command options are built
from the options types of :mod:`dshctl.options`); the man page's are the tags of the ``.TP`` entries in
each command's section (``.SS "dshctl COMMAND ..."`` up to the next command or ``.SH``) and in GLOBAL
OPTIONS. For every command: each option the CLI declares has an entry in its section, each entry names an
option the CLI has, with the placeholder ``--help`` shows (``--turn N``, ``--by session|turn|...``), and the
section's heading names the arguments of the usage line. An option the group takes too (``--no-color``,
accepted before or after the command name) is documented once, under GLOBAL OPTIONS.
"""

from __future__ import annotations

import re

import pytest
import typer.core
import typer.main

from dshctl import manpage
from dshctl.cli import app

from conftest import REPO

click = typer.core._click
PAGE = REPO / "man" / "dshctl.1"
HELP = {"-h", "--help"}
_ENTRY = re.compile(r"(--?[A-Za-z][a-z0-9-]*)(?: (\S+))?")


def _group():
    return typer.main.get_command(app)


def _cli_options(command) -> dict[str, str | None]:
    """Each flag of ``command`` and the placeholder ``--help`` shows for its value (None: a switch)."""
    ctx = click.Context(command, info_name=command.name)
    options: dict[str, str | None] = {}
    for param in command.params:
        if param.param_type_name != "option" or param.hidden:
            continue
        shown = param.get_help_record(ctx)[0]
        metavar = None if param.is_flag or param.count else shown.rsplit(" ", 1)[-1].strip("<>")
        options.update(dict.fromkeys(param.opts + param.secondary_opts, metavar))
    return options


def _entries(tag: str) -> dict[str, str | None] | None:
    """The options an entry's tag names (``-j N, --jobs N``; ``--json / --ndjson``), or None for an entry
    that names no option (a record key, a rule id)."""
    text = manpage.plain(tag)
    if not text.startswith("-"):
        return None
    named: dict[str, str | None] = {}
    for piece in re.split(r", | / ", text):
        match = _ENTRY.fullmatch(piece.strip())
        assert match, f"man page entry {text!r}: {piece!r} is not an option with an optional placeholder"
        named[match.group(1)] = match.group(2)
    return named


def _man_sections() -> tuple[dict[str, dict[str, str | None]], dict[str, list[str]]]:
    """Per section (each command's, and ``GLOBAL`` for GLOBAL OPTIONS): the options its entries name;
    and each command's headings: a section may open with several (``dshctl grep PATTERN [PATH...]``, then
    ``dshctl grep \\-e PATTERN ...``), and a small command may be an entry of GLOBAL OPTIONS instead
    (``dshctl help [COMMAND]``)."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    options: dict[str, dict[str, str | None]] = {}
    headings: dict[str, list[str]] = {}
    section = None
    for number, line in enumerate(lines):
        command = re.match(r'\.SS "(dshctl (\w+).*)"$', line)
        if command:
            section = command.group(2)
            headings.setdefault(section, []).append(manpage.plain(command.group(1)))
            options.setdefault(section, {})
        elif line.startswith(".SH"):
            section = "GLOBAL" if line == ".SH GLOBAL OPTIONS" else None
            if section:
                options[section] = {}
        elif line.startswith(".SS") and section == "GLOBAL":
            section = None
        elif section and line == ".TP":
            tag = lines[number + 1]
            named = _entries(tag)
            if named is not None:
                options[section].update(named)
            elif section == "GLOBAL" and re.match(r"dshctl \w+", manpage.plain(tag)):
                headings.setdefault(manpage.plain(tag).split()[1], []).append(manpage.plain(tag))
    return options, headings


MAN_OPTIONS, MAN_HEADINGS = _man_sections()
SECTIONS = set(MAN_OPTIONS) - {"GLOBAL"}
COMMANDS = sorted(_group().commands)


def _everywhere() -> set[str]:
    """The options every command with a section of its own declares (documented once, under GLOBAL
    OPTIONS, if at all there)."""
    group = _group()
    return set.intersection(*(set(_cli_options(group.commands[name])) for name in group.commands if name in SECTIONS))


def test_every_command_has_its_section_and_every_section_its_command():
    assert sorted(MAN_HEADINGS) == COMMANDS


def test_the_global_options_are_the_groups():
    """GLOBAL OPTIONS documents every option of the group, and besides them only options every command
    takes."""
    group = _group()
    documented = MAN_OPTIONS["GLOBAL"]
    declared = {**_cli_options(group), **dict.fromkeys(HELP)}
    assert {flag: documented.get(flag) for flag in declared} == declared
    assert set(documented) - set(declared) <= _everywhere()


@pytest.mark.parametrize("name", COMMANDS)
def test_a_commands_section_documents_exactly_its_options(name):
    command = _group().commands[name]
    declared = _cli_options(command)
    global_ones = set(MAN_OPTIONS["GLOBAL"])
    documented = MAN_OPTIONS.get(name, {})
    missing = sorted(set(declared) - set(documented) - global_ones - HELP)
    assert not missing, f"dshctl {name} has options its man page section does not document: {missing}"
    unknown = sorted(set(documented) - set(declared) - HELP)
    assert not unknown, f"the man page documents options dshctl {name} does not have: {unknown}"
    placeholders = {flag: (declared[flag], shown) for flag, shown in documented.items() if flag in declared and declared[flag] != shown}
    assert not placeholders, f"dshctl {name}: placeholders (--help, man page) differ: {placeholders}"


def _arguments(words: list[str]) -> list[tuple[str, bool]]:
    """The positional arguments of a usage line or heading, as (NAME, repeatable): ``[PATH]...`` and
    ``[PATH...]`` are both ``("PATH", True)``; an option given in a heading (``--out DIR``) is skipped."""
    found, skip = [], False
    for word in words:
        if skip or word == "[OPTIONS]":
            skip = False
            continue
        if word.strip("[").startswith("-"):
            skip = True  # its placeholder follows
            continue
        found.append((word.strip("[]."), "..." in word))
    return found


@pytest.mark.parametrize("name", COMMANDS)
def test_a_commands_heading_names_the_arguments_of_its_usage(name):
    command = _group().commands[name]
    ctx = click.Context(command, info_name=name)
    usage = " ".join(command.collect_usage_pieces(ctx)).split()
    assert all(word.strip("[].").isupper() for word in usage), f"dshctl {name} --help: usage {usage} (arguments in capitals)"
    assert _arguments(usage) in [_arguments(heading.split()[2:]) for heading in MAN_HEADINGS[name]]


def test_the_page_mentions_no_option_the_cli_lacks():
    """In prose too: an option renamed or removed leaves no mention behind (the dsh project directory
    names of the examples, ``--slug--``, are not options, nor the mistyped option of a usage error)."""
    group = _group()
    known = set(_cli_options(group)) | HELP
    for command in group.commands.values():
        known |= set(_cli_options(command))
    text = manpage.plain(PAGE.read_text(encoding="utf-8"))
    text = re.sub(r"no such option: \S+", "", text)  # a usage error's example quotes a mistyped option
    mentioned = set(re.findall(r"(?<![\w-])--[a-z](?:[a-z0-9-]*[a-z0-9])?(?![\w~-])", text))
    assert mentioned - known == set()
