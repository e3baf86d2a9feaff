"""The stdio and error path every command runs in.

* Standard output carries data only; warnings and errors go to standard error.
* A closed pipe (``dshctl cat log | head``) ends the command quietly with status 0.
* Standard output that cannot be written (closed, disk full, I/O error) is an :class:`OutputError`,
  reported like any other error; standard error is best effort and never changes the exit status.
* Errors print one line, ``dshctl: error: FILE:LINE (seq N): MESSAGE``, and exit
  with the error's documented status (see :mod:`dshctl.errors`); never a traceback.
* Colour follows ``--color auto|always|never`` (``--no-color``: never): auto colours a terminal unless
  ``NO_COLOR`` is set, and ``FORCE_COLOR`` or ``CLICOLOR_FORCE`` colour a pipe too (:func:`color_wanted`).
* Text from a log is data: warnings and errors show control characters as pictures
  (:mod:`dshctl.textsafe`, imported when a line is written: ``--help`` writes none).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

from .terminal import color_wanted, is_terminal, stdout_is_pipe, terminal_width  # noqa: F401 - the names commands import from here
from .errors import EXIT_UNREADABLE, DshctlError, OutputError


def _to_stderr(line: str) -> None:
    from .progress import bar_console

    held = bar_console()  # a progress bar is drawn: the line goes above it
    if held is not None:
        try:
            held.print(line, markup=False, highlight=False, emoji=False, soft_wrap=True)
            return
        except Exception:  # noqa: BLE001 - the bar's terminal is gone: write directly
            pass
    stderr = _BestEffortStderr(sys.stderr)  # library callers run outside run(), too
    stderr.write(line + "\n")
    stderr.flush()


def warn(message: str) -> None:
    """A warning line on stderr; never changes the exit status. Log text in ``message`` is shown safely."""
    from .textsafe import visible_line

    _to_stderr(f"dshctl: warning: {visible_line(message)}")


def error(message: str) -> None:
    """An error line on stderr, for a command that goes on to end with a failing status itself."""
    from .textsafe import visible_line

    _to_stderr(f"dshctl: error: {visible_line(message)}")


def note(message: str) -> None:
    """An informational line on stderr (``dshctl: wrote x.cast``); never changes the exit status."""
    from .textsafe import visible_line

    _to_stderr(f"dshctl: {visible_line(message)}")


def caveat(message: str) -> None:
    """A note about the figures a command printed (a cost left null, currencies never converted):
    ``dshctl: note: …``, worded as the tables' own ``note:`` lines and validate's, beside ``warning:``
    and ``error:``; :func:`note` is for what a command did (``dshctl: wrote x.cast``). Never changes the
    exit status; ``--quiet`` hides both, as the callers say."""
    from .textsafe import visible_line

    _to_stderr(f"dshctl: note: {visible_line(message)}")


def error_line(error: DshctlError) -> str:
    from .textsafe import visible_line

    return f"dshctl: error: {visible_line(str(error))}"


class _CheckedStdout:
    """``sys.stdout`` while a command runs: the real stream, except that a write that fails (disk
    full, I/O error) or finds standard output closed raises :class:`OutputError` for :func:`run` to
    report. A closed pipe stays BrokenPipeError, which run() ends quietly."""

    def __init__(self, stream) -> None:
        self._stream = stream  # None when the process started with standard output closed

    def write(self, data):
        return self._checked("write", data)

    def flush(self) -> None:
        if self._stream is not None:
            self._checked("flush")

    def isatty(self) -> bool:
        try:
            return self._stream is not None and self._stream.isatty()
        except (OSError, ValueError):
            return False

    @property
    def buffer(self) -> "_CheckedStdout":
        return _CheckedStdout(getattr(self._stream, "buffer", None))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)

    def _checked(self, method: str, *args):
        if self._stream is None:
            raise OutputError("cannot write standard output: it is closed")
        try:
            return getattr(self._stream, method)(*args)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as exc:
            raise OutputError(f"cannot write standard output: {getattr(exc, 'strerror', None) or exc}") from None


class _BestEffortStderr:
    """``sys.stderr`` while a command runs: a closed or failing standard error loses the message, never
    the exit status (click prints usage errors through it, too)."""

    def __init__(self, stream) -> None:
        self._stream = stream  # None when the process started with standard error closed

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except (AttributeError, OSError, ValueError):
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except (AttributeError, OSError, ValueError):
            pass

    def isatty(self) -> bool:
        try:
            return self._stream.isatty()
        except (AttributeError, OSError, ValueError):
            return False

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """After EPIPE or a failed write, point stdout at /dev/null so the interpreter's final flush of
    what is still buffered cannot complain (or turn the exit status into 120)."""
    _point_at_devnull(sys.stdout)


def _point_at_devnull(stream) -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass


def settle_stderr() -> None:
    """Flush standard error now, while a failure can still be swallowed. A buffered standard error that
    cannot be written (``2>/dev/full``, an I/O error) keeps what it holds, and the interpreter's own
    flush at exit would fail on it again and turn the exit status into 120 (with PYTHONUNBUFFERED it is
    written through and fails early instead). So when this flush fails, what is left goes to /dev/null:
    the message is lost, the status stands."""
    stream = sys.stderr
    if stream is None:  # the process started with standard error closed
        return
    try:
        stream.flush()
        return
    except (AttributeError, OSError, ValueError):
        pass
    _point_at_devnull(stream)
    try:
        stream.flush()
    except (AttributeError, OSError, ValueError):
        pass


def _flush_or_silence() -> None:
    try:
        sys.stdout.flush()
    except (BrokenPipeError, OutputError):
        _silence_stdout()


def run(body: Callable[[], int | None]) -> int:
    """Run a command body through the one error path and return its exit status."""
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _CheckedStdout(stdout), _BestEffortStderr(stderr)
    try:
        return _exit_status(body)
    finally:
        sys.stdout, sys.stderr = stdout, stderr
        settle_stderr()


def _exit_status(body: Callable[[], int | None]) -> int:
    try:
        status = body() or 0
        try:
            sys.stdout.flush()  # small outputs meet a full disk only here
        except BrokenPipeError:
            _silence_stdout()
        return status
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except DshctlError as exc:
        _flush_or_silence()
        _to_stderr(error_line(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        from .interrupt import interrupted_status

        return interrupted_status()
    except MemoryError:
        _to_stderr("dshctl: error: out of memory")
        return EXIT_UNREADABLE
