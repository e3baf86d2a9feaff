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

        cli_main()
    except KeyboardInterrupt:
        raise SystemExit(interrupt.interrupted_status()) from None
