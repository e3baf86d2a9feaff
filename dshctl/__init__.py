"""dshctl: read dsh (deepseek-harness) session logs — the library under the ``dshctl`` command.

Every command is a few lines over these names, which load on first use so that ``import dshctl``
(and ``dshctl --help``) stays cheap::

    import dshctl

    with dshctl.open_log("samples/tour.session.v4.jsonl.zstd") as log:
        for event in log.events():
            ...
    stats = dshctl.log_stats("samples/tour.session.v4.jsonl.zstd")
    found = dshctl.grep_log("samples/tour.session.v4.jsonl.zstd", "Node 14", fixed=True)
    report = dshctl.validate_log("samples/tour.session.v4.jsonl.zstd")
    images = dshctl.scan_images("samples/tour.session.v4.jsonl.zstd")
    timeline = dshctl.Timeline.open("samples/tour.session.v4.jsonl.zstd")

Each function takes a path (str or os.PathLike), ``-`` for standard input, or a :class:`LogRef` from
:func:`resolve`. docs/api.md has a runnable example of each.
"""

from __future__ import annotations

__version__ = "0.1.0"

_API = {
    "open_log": ("dshctl.reader", "open_log"),
    "Log": ("dshctl.reader", "Log"),
    "Event": ("dshctl.model", "Event"),
    "Header": ("dshctl.model", "Header"),
    "LogRef": ("dshctl.source", "LogRef"),
    "resolve": ("dshctl.source", "resolve"),
    "log_stats": ("dshctl.stats", "log_stats"),
    "grep_log": ("dshctl.grep", "grep_log"),
    "grep_logs": ("dshctl.grep", "grep_logs"),
    "validate_log": ("dshctl.validate", "validate_log"),
    "scan_images": ("dshctl.images.scan", "scan_images"),
    "Timeline": ("dshctl.replay.timeline", "Timeline"),
    "export": ("dshctl.export", "export"),
    "ExportOptions": ("dshctl.export", "ExportOptions"),
    "sql": ("dshctl.export.sql", "sql"),
    "SqlOptions": ("dshctl.export.sql", "SqlOptions"),
    "DshctlError": ("dshctl.errors", "DshctlError"),
}

__all__ = ["__version__", *_API]


def __getattr__(name: str):
    try:
        module_name, attribute = _API[name]
    except KeyError:
        raise AttributeError(f"module 'dshctl' has no attribute {name!r}") from None
    import importlib

    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
