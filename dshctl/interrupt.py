"""What Ctrl-C does before a command is under way.

Importing the command line (typer, click, rich) takes a good part of a second on a busy machine, and a
Ctrl-C in that time used to end in a KeyboardInterrupt traceback. The console script
(:mod:`dshctl.entry`) calls :func:`install` before importing anything else, and the handler only notes
a first Ctrl-C as pending (a second one raises KeyboardInterrupt, which ends the command quietly). When
the command body starts (:func:`command_starts`), a pending Ctrl-C takes effect:

* a command that follows a log (``-f``/``--follow`` among the arguments): :class:`~dshctl.follow.Follower`
  takes it over when it starts (:func:`take_over`), so the log is read as it stands and the command exits
  0, as a Ctrl-C while following does;
* any other command is interrupted: ``dshctl: interrupted``, status 130.

A SIGINT during the interpreter's own start-up, before the console script runs, is Python's to report.
"""

from __future__ import annotations

import signal
import sys

__all__ = ["EXIT_INTERRUPTED", "asks_to_follow", "command_starts", "install", "interrupted_status", "take_over"]

EXIT_INTERRUPTED = 130
FOLLOW_COMMANDS = ("cat", "stats", "replay")

_state = {"following": False, "pending": False}


def install(args: list[str]) -> None:
    """The early SIGINT handler, for the command line ``args`` (without the program name); installed
    first, so that a Ctrl-C while the arguments are read is one too."""
    signal.signal(signal.SIGINT, _on_early_sigint)
    _state["following"] = asks_to_follow(args)


def asks_to_follow(args: list[str]) -> bool:
    """Whether the command line asks ``cat``, ``stats`` or ``replay`` to follow (read before parsing: a
    rough reading that only decides what an early Ctrl-C does)."""
    words = [arg for arg in args if not arg.startswith("-")]
    if not words or words[0] not in FOLLOW_COMMANDS:
        return False
    from .options.base import FOLLOW  # not before: dshctl --version need not import the options

    options = args[: args.index("--")] if "--" in args else args
    short = next(flag[1:] for flag in FOLLOW.flags if not flag.startswith("--"))
    return any(arg in FOLLOW.flags or _short_cluster_with(short, arg) for arg in options)


def _short_cluster_with(short: str, arg: str) -> bool:
    """``-vf``: short options run together, one of them ``short``."""
    return arg.startswith("-") and not arg.startswith("--") and arg[1:].isalpha() and short in arg[1:]


def _on_early_sigint(signum, frame) -> None:
    if not _state["pending"]:
        _state["pending"] = True
        return
    raise KeyboardInterrupt


def command_starts() -> None:
    """The command body begins: a Ctrl-C pending interrupts a command that does not follow (a following
    one leaves it to the Follower, which is still to be set up)."""
    if not _state["following"] and take_over():
        raise KeyboardInterrupt


def take_over() -> bool:
    """Whether a Ctrl-C came before following began. Call it from the main thread once Ctrl-C is
    handled otherwise (a handler of one's own, or KeyboardInterrupt caught)."""
    pending, _state["pending"] = _state["pending"], False
    if signal.getsignal(signal.SIGINT) is _on_early_sigint:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return pending


def interrupted_status() -> int:
    """The exit status of a command that KeyboardInterrupt ended: 0 for one that follows, else 130 with
    ``dshctl: interrupted`` on standard error."""
    if _state["following"]:
        return 0
    try:
        sys.stderr.write("dshctl: interrupted\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        pass
    return EXIT_INTERRUPTED
