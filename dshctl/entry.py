"""The ``dshctl`` console script: Ctrl-C is handled before the command line is imported
(:mod:`dshctl.interrupt`)."""

from __future__ import annotations

import sys

from . import interrupt

__all__ = ["main"]


def main() -> None:
    try:
        interrupt.install(sys.argv[1:])
        from .cli import main as cli_main

        cli_main()  # ends in SystemExit, standard error settled (dshctl.stdio.run)
    except KeyboardInterrupt:  # before the command line was imported: no stdio.run around it yet
        status = interrupt.interrupted_status()
        from .stdio import settle_stderr

        settle_stderr()
        raise SystemExit(status) from None
