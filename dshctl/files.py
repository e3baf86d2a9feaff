"""Files dshctl writes (exports): whole or not at all."""

from __future__ import annotations

import os
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
    however the body ends otherwise (an error, Ctrl-C)."""
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


