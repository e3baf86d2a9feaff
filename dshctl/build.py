"""Which build of dshctl is running: the pure-Python modules, or the compiled build, where ``pip install``
compiled the hot modules (today the stats fold: ``setup.py``'s ``COMPILED``) from the same typed
source with mypyc. ``dshctl --version`` prints it; nothing else depends on it."""

from __future__ import annotations

from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any, Callable

try:
    from mypy_extensions import mypyc_attr
except ImportError:  # the pure build needs no mypy_extensions: the decorator only speaks to mypyc

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Callable[[Any], Any]:  # type: ignore[misc]
        return lambda cls: cls


def compiled_modules() -> list[str]:
    """The package's modules that an extension module shadows (Python imports an extension before the
    ``.py`` file beside it), as dotted names."""
    root = Path(__file__).resolve().parent
    suffixes = sorted(EXTENSION_SUFFIXES, key=len, reverse=True)  # ".cpython-311-x86_64-linux-gnu.so" before ".so"
    found = set()
    for path in root.rglob("*"):
        suffix = next((suffix for suffix in suffixes if path.name.endswith(suffix)), None)
        if suffix is not None and path.with_name(path.name.removesuffix(suffix) + ".py").exists():
            parts = path.relative_to(root).with_name(path.name.removesuffix(suffix)).parts
            found.add(".".join(("dshctl", *parts)))
    return sorted(found)


def describe() -> str:
    modules = compiled_modules()
    if not modules:
        return "pure Python"
    return "compiled with mypyc: " + ", ".join(name.removeprefix("dshctl.") for name in modules)
