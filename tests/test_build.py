"""``dshctl --version`` names the build (pure or compiled) cheaply: it looks only for the modules setup.py may
compile, never walks the package."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from conftest import REPO, invoke
from dshctl import build


def _setup_compiled() -> list[str]:
    tree = ast.parse((REPO / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == "COMPILED" for target in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError("setup.py has no COMPILED list")


def test_the_modules_looked_for_are_the_ones_setup_compiles():
    assert sorted(build.COMPILABLE) == sorted(_setup_compiled())


def test_an_extension_beside_a_module_is_named(tmp_path, monkeypatch):
    from importlib.machinery import EXTENSION_SUFFIXES

    package = tmp_path / "dshctl" / "stats"
    package.mkdir(parents=True)
    (package / "fold.py").write_text("")
    assert build.compiled_modules(str(tmp_path)) == []
    (package / ("fold" + EXTENSION_SUFFIXES[0])).write_bytes(b"")
    assert build.compiled_modules(str(tmp_path)) == ["dshctl.stats.fold"]


def test_version_walks_nothing(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("--version walked the package")

    monkeypatch.setattr(Path, "rglob", refuse)
    monkeypatch.setattr(Path, "glob", refuse)
    monkeypatch.setattr(os, "walk", refuse)
    monkeypatch.setattr(os, "scandir", refuse)
    result = invoke("--version")
    assert result.exit_code == 0 and "(pure Python)" in result.stdout  # the checkout: an editable, pure build
