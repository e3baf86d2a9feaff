"""The ``dshctl`` console script: Ctrl-C is handled before the command line is imported
(:mod:`dshctl.interrupt`), and the common command lines start without typer.

``dshctl --version`` and a command line that :func:`dshctl.commands.parse` reads (``dshctl stats --json
LOG``, any command but ``help`` with options it reads exactly as typer would) run without importing
typer and click, which cost more than a short command's own work; anything else (``--help``, a usage
error, completion) goes to the typer command line (:mod:`dshctl.cli`), which says what typer says.
"""

from __future__ import annotations

import sys

from . import interrupt

__all__ = ["main"]


def main() -> None:
    try:
        args = sys.argv[1:]
        interrupt.install(args)
        if args == ["--version"]:
            from .stdio import run

            raise SystemExit(run(_print_version))
        from .commands import parse

        parsed = parse(args)
        if parsed is not None:
            from .commands import start
            from .stdio import run

            # two error paths, as under typer: the command's own, and the one around the command line
            raise SystemExit(run(lambda: start(*parsed)))
        from .cli import main as cli_main

        cli_main()  # ends in SystemExit, standard error settled (dshctl.stdio.run)
    except KeyboardInterrupt:  # before the command line was imported: no stdio.run around it yet
        status = interrupt.interrupted_status()
        from .stdio import settle_stderr

        settle_stderr()
        raise SystemExit(status) from None


def _print_version() -> int:
    from .build import version_line

    sys.stdout.write(version_line() + "\n")
    sys.stdout.flush()
    return 0
