"""Files dshctl writes (exports): whole or not at all.

What a name may already be: nothing (the file is made), a regular file (replaced only with ``--force``),
a directory (refused), or a character device or FIFO (``/dev/null``, ``/dev/stdout`` on a terminal or a
pipe, a named pipe) or the name of an open descriptor (``/dev/stdout`` redirected to a file): that is no
file being overwritten but a stream, written in place without ``--force`` (a temporary file cannot take
its name, and must not: replacing ``/dev/null`` or the ``/dev/stdout`` link would break the machine).
"""

from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator, TextIO

from .errors import OutputError, os_error_reason

@contextmanager
def new_text_file(path: Path, *, force: bool) -> Iterator[TextIO]:
    """A text file written whole or not at all: the text goes to a temporary file beside ``path`` that
    takes its name only once everything is written, so a failed write never leaves a half file under
    that name. An existing ``path`` is refused unless ``force``."""
    with _new_file(path, force=force) as fd:
        with open(fd, "w", encoding="utf-8", newline="\n") as out:
            yield out


@contextmanager
def new_binary_file(path: Path, *, force: bool) -> Iterator[BinaryIO]:
    """:func:`new_text_file` for bytes."""
    with _new_file(path, force=force) as fd:
        with open(fd, "wb", buffering=1 << 20) as out:
            yield out


@contextmanager
def _new_file(path: Path, *, force: bool) -> Iterator[int]:
    """The descriptor of the temporary file; it takes ``path``'s name when the body ends, and is removed
    however the body ends otherwise (an error, Ctrl-C). A stream (:func:`is_stream`) is opened in place."""
    if is_stream(path):
        with _stream(path) as fd:
            yield fd
        return
    _refuse_existing(path, force)
    import secrets  # hmac, hashlib and random: 4 ms a start-up that writes no file should not pay

    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {os_error_reason(exc)}") from None
    try:
        yield fd
        _publish(temporary, path, force)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {os_error_reason(exc)}") from None
    finally:
        _remove_if_present(temporary)


def is_stream(path: Path) -> bool:
    """``path`` (its links followed) is a character device or a FIFO, or names an open descriptor
    (``/dev/stdout``, ``/dev/fd/N``, whatever it is redirected to): written in place, never replaced."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # nothing there (or nothing reachable): a file to make, as the other checks say
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or (stat.S_ISREG(mode) and _names_a_descriptor(path))


def _names_a_descriptor(path: Path) -> bool:
    """``path`` reaches an entry of ``/proc/<pid>/fd`` (``/dev/stdout`` → ``/proc/self/fd/1``): a name of
    a descriptor, not of the file it is open on — replacing it would replace the link (``/dev/stdout``)."""
    import re

    current = os.path.abspath(path)
    for _ in range(8):  # a link chain of a few hops; a loop ends here too
        if re.fullmatch(r"/proc/\d+/fd", os.path.realpath(os.path.dirname(current))):
            return True
        if not os.path.islink(current):
            return False
        current = os.path.join(os.path.dirname(current), os.readlink(current))
    return False


@contextmanager
def _stream(path: Path) -> Iterator[int]:
    """A stream's descriptor, opened for writing as a shell's ``>`` would (a FIFO waits for its reader);
    a regular file behind a descriptor's name (``> out.md``, ``>> log.md``) is appended to."""
    append = os.O_APPEND if os.path.isfile(path) else 0
    try:
        fd = os.open(path, os.O_WRONLY | append | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {os_error_reason(exc)}") from None
    try:
        yield fd
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {os_error_reason(exc)}") from None


def _refuse_existing(path: Path, force: bool) -> None:
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a directory")
    if not force and os.path.lexists(path):
        raise OutputError(f"{path} already exists (--force overwrites)")


def _publish(temporary: Path, path: Path, force: bool) -> None:
    if force:
        os.replace(temporary, path)
        return
    try:
        os.link(temporary, path)  # unlike a rename, fails if the name appeared meanwhile
    except FileExistsError:
        raise OutputError(f"{path} already exists (--force overwrites)") from None
    except OSError:  # a file system without hard links
        _refuse_existing(path, force)
        os.rename(temporary, path)


def _remove_if_present(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


