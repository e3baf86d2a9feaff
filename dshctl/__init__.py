"""dshctl: read dsh (deepseek-harness) session logs — the library under the ``dshctl`` command, by the
commands' names::

    import dshctl

    result = dshctl.stats("samples/tour.session.v4.jsonl.zstd", by="turn")
    found = dshctl.grep("samples/sessions", "Node 14", fixed_strings=True)
    checked = dshctl.validate("samples/tour.session.v4.jsonl.zstd")
    with dshctl.open_log("samples/tour.session.v4.jsonl.zstd") as log:
        for event in log.events():
            ...

Each command takes its options object (``dshctl.StatsOptions(by="turn")``, the same one the command
line builds) or its fields as keywords. :data:`__all__` is the public surface; docs/api.md documents
each name with a runnable example. The names load on first use, so ``import dshctl`` (and
``dshctl --help``) stays cheap.

``dshctl.stats``, ``dshctl.grep`` … are functions; the modules of the same name are reached with
``from dshctl.stats import …``.
"""

import sys as _sys
import types as _types

__version__ = "0.1.0"

_API = {
    # the commands
    "cat": ("dshctl.api", "cat"),
    "grep": ("dshctl.api", "grep"),
    "images": ("dshctl.api", "images"),
    "ls": ("dshctl.api", "ls"),
    "replay": ("dshctl.api", "replay"),
    "stats": ("dshctl.api", "stats"),
    "timeline": ("dshctl.api", "timeline"),
    "validate": ("dshctl.api", "validate"),
    "export": ("dshctl.api", "export"),
    "sql": ("dshctl.api", "sql"),
    # their options
    "CatOptions": ("dshctl.options", "CatOptions"),
    "ExportOptions": ("dshctl.options", "ExportOptions"),
    "SqlOptions": ("dshctl.options", "SqlOptions"),
    "GrepOptions": ("dshctl.options", "GrepOptions"),
    "ImagesOptions": ("dshctl.options", "ImagesOptions"),
    "LsOptions": ("dshctl.options", "LsOptions"),
    "ReplayOptions": ("dshctl.options", "ReplayOptions"),
    "StatsOptions": ("dshctl.options", "StatsOptions"),
    "ValidateOptions": ("dshctl.options", "ValidateOptions"),
    # what they return
    "GrepResult": ("dshctl.api", "GrepResult"),
    "StatsResult": ("dshctl.api", "StatsResult"),
    "ValidateResult": ("dshctl.api", "ValidateResult"),
    "Timeline": ("dshctl.replay.timeline", "Timeline"),
    "LogFailure": ("dshctl.errors", "LogFailure"),
    "DshctlError": ("dshctl.errors", "DshctlError"),
    "UsageError": ("dshctl.errors", "UsageError"),
    # the one reading path
    "open_log": ("dshctl.reader", "open_log"),
    "Log": ("dshctl.reader", "Log"),
    "Event": ("dshctl.model", "Event"),
    "Header": ("dshctl.model", "Header"),
    "LogRef": ("dshctl.source", "LogRef"),
    "resolve": ("dshctl.source", "resolve"),
}

_GONE = {
    "log_stats": "dshctl.stats(path, by=...)",
    "grep_log": "dshctl.grep(path, pattern, ...)",
    "grep_logs": "dshctl.grep(paths, pattern, ...)",
    "validate_log": "dshctl.validate(path)",
    "scan_images": "dshctl.images(path)",
}
"""The library's names before it took the commands' (0.1): each says what replaces it."""

__all__ = ["__version__", *_API]


def __getattr__(name: str):
    try:
        module_name, attribute = _API[name]
    except KeyError:
        if name in _GONE:
            raise AttributeError(f"dshctl.{name} is gone: use {_GONE[name]} (docs/api.md)") from None
        raise AttributeError(f"module 'dshctl' has no attribute {name!r}") from None
    import importlib

    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


class _Package(_types.ModuleType):
    """The ``dshctl`` module: importing ``dshctl.stats`` (the module) binds it on its package under the
    command's name; here the function of that name keeps it."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in _API and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
