"""Which build of dshctl is running: the pure-Python modules, or the compiled build, where ``pip install``
compiled the hot modules (``setup.py``'s ``COMPILED``) from the same typed source with mypyc.
``dshctl --version`` prints it; nothing else depends on it. :func:`mypyc_attr` marks a compiled class that
pure code may extend (a no-op where mypy is not installed)."""

from __future__ import annotations

import os
from importlib.machinery import EXTENSION_SUFFIXES
from typing import Any, Callable

COMPILABLE = (
    "dshctl/source/zstd.py", "dshctl/source/lines.py", "dshctl/generations/v0.py", "dshctl/stats/fold.py", "dshctl/reader.py",
)
"""The modules ``setup.py`` may compile (its ``COMPILED``; a test keeps the two lists equal). Only these are
looked for, so ``--version`` costs a few ``stat`` calls, not a walk of the package."""

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # the pure build needs no mypy_extensions: the decorator only speaks to mypyc

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Callable[[Any], Any]:  # type: ignore[misc]
        return lambda cls: cls


def compiled_modules(root: str | None = None) -> list[str]:
    """The modules of :data:`COMPILABLE` that an extension module shadows (Python imports an extension before
    the ``.py`` file beside it), as dotted names; ``root`` holds the ``dshctl`` package (default: this one's)."""
    root = root or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = []
    for source in COMPILABLE:
        stem = os.path.join(root, *source.removesuffix(".py").split("/"))
        if any(os.path.exists(stem + suffix) for suffix in EXTENSION_SUFFIXES):
            found.append(source.removesuffix(".py").replace("/", "."))
    return sorted(found)


def describe() -> str:
    modules = compiled_modules()
    if not modules:
        return "pure Python"
    return "compiled with mypyc: " + ", ".join(name.removeprefix("dshctl.") for name in modules)


def version_line() -> str:
    """``dshctl 0.1.0 (pure Python)``: what ``dshctl --version`` prints."""
    from . import __version__

    return f"dshctl {__version__} ({describe()})"
