"""One error path for every command: what went wrong, where, and which exit status it means."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_UNREADABLE = 2


class DshctlError(Exception):
    """An error a user can act on. Rendered as one line: ``dshctl: FILE:LINE (seq N): MESSAGE``."""

    exit_code = EXIT_UNREADABLE

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None, seq: int | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.seq = seq

    def located(self, *, file: str | None = None, line: int | None = None, seq: int | None = None) -> "DshctlError":
        """Fill in location fields that are still unknown and return self."""
        if self.file is None:
            self.file = file
        if self.line is None:
            self.line = line
        if self.seq is None:
            self.seq = seq
        return self

    def where(self) -> str:
        parts = []
        if self.file is not None:
            parts.append(self.file if self.line is None else f"{self.file}:{self.line}")
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if self.seq is not None:
            parts.append(f"(seq {self.seq})")
        return " ".join(parts)

    def __str__(self) -> str:
        where = self.where()
        return f"{where}: {self.message}" if where else self.message

    def detail(self) -> str:
        """The message located by line and seq but not by file, for a row or warning that names the file
        itself: ``line 1: not JSON: not a dsh session log``."""
        where = [f"line {self.line}"] if self.line is not None else []
        where += [f"(seq {self.seq})"] if self.seq is not None else []
        return f"{' '.join(where)}: {self.message}" if where else self.message


class SourceError(DshctlError):
    """The bytes cannot be read as a dsh log: missing file, corrupt zstd, oversized line, bad UTF-8."""


class FormatError(DshctlError):
    """The lines are not a dsh log of a known shape: bad header, unparsable committed record, seq gap."""


class UnsupportedVersion(DshctlError):
    """The log was written by a newer dsh than this tool supports (header version > 4). ``version`` is
    the generation its header or file name tells, when one does."""

    def __init__(self, message: str, *, version: int | None = None, **where):
        super().__init__(message, **where)
        self.version = version


class StreamError(DshctlError):
    """A compact assistant stream breaks a strict-expansion rule; names the record position and the rule."""

    def __init__(self, message: str, *, record: int | None = None, rule: str | None = None, **where):
        super().__init__(message, **where)
        self.record = record
        self.rule = rule


class UsageError(DshctlError):
    """Bad command-line usage."""


class OutputError(DshctlError):
    """Output cannot be written: standard output closed or failing (disk full, I/O error), or an
    export file that cannot be created."""


def os_error_reason(exc: OSError) -> str:
    """What went wrong in an OSError, for a one-line message: its ``strerror`` (``No such file or
    directory``), else whatever the exception says."""
    return exc.strerror or str(exc)


class LogFailure:
    """A log among many that could not be read: a value in a many-log result (``dshctl.stats``,
    ``dshctl.grep``), where the only log given raises its error instead."""

    __slots__ = ("path", "error")

    def __init__(self, path: str, error: DshctlError) -> None:
        self.path = path
        self.error = error

    def __repr__(self) -> str:
        return f"LogFailure({self.path!r}, {self.error!r})"
