"""The shape of the package: which dshctl modules import which.

The import graph is read from the source with ``ast`` — every ``import`` and ``from … import``, at the
top of a module, inside a function, or under ``if TYPE_CHECKING:`` — for every module under dshctl/,
whatever it is called, so modules added later are held to the same rules:

* no import cycle among dshctl modules (a cycle makes import order matter and hides which module is
  the lower layer);
* the leaf modules — the rules every layer leans on — import nothing from dshctl;
* the compact stream does not know the assembler built on it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "dshctl"

LEAVES = ("dshctl.jsvalues", "dshctl.textsafe", "dshctl.humanize", "dshctl.errors")
"""Modules that import nothing from dshctl: JavaScript value rules, the text rule, human-readable
numbers and times, the error types."""

FORBIDDEN = [("dshctl.stream", "dshctl.assembler")]
"""(lower, upper) pairs: the lower module must not import the upper one, directly or through others."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE_DIR.rglob("*.py"))}


def _imported(module: str, is_package: bool, source_text: str, known: set[str]) -> set[str]:
    """The dshctl modules ``module`` imports anywhere in its source (``known``: every dshctl module)."""
    package = module if is_package else module.rpartition(".")[0]
    targets: set[str] = set()

    def nearest_module(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    for node in ast.walk(ast.parse(source_text)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # ``from package import submodule`` imports the submodule; ``from module import name`` the module.
            names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source for alias in node.names]
        else:
            continue
        for name in names:
            if name == "dshctl" or name.startswith("dshctl."):
                target = nearest_module(name)
                if target is not None and target != module:
                    targets.add(target)
    return targets


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {
        module: _imported(module, path.name == "__init__.py", path.read_text(encoding="utf-8"), known)
        for module, path in modules.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each as one cycle path."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def visit(root: str) -> None:
        nonlocal counter
        # iterative DFS: (module, iterator over its imports)
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[module] = min(low[module], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return [_one_cycle(graph, component) for component in components]


def _one_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A readable cycle through the component's first module: ``a -> b -> … -> a``."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for module in frontier:
            for child in sorted(graph[module] & members):
                if child == start:
                    return paths[module] + [start]
                if child not in paths:
                    paths[child] = paths[module] + [child]
                    following.append(child)
        frontier = following
    return component


def _reachable(graph: dict[str, set[str]], module: str) -> set[str]:
    seen: set[str] = set()
    pending = [module]
    while pending:
        for child in graph[pending.pop()]:
            if child not in seen:
                seen.add(child)
                pending.append(child)
    return seen


GRAPH = _graph()


def test_the_graph_sees_the_package():
    assert {"dshctl.reader", "dshctl.stream", "dshctl.assembler", "dshctl.jsvalues", "dshctl.cli"} <= set(GRAPH)
    assert "dshctl.model" in GRAPH["dshctl.reader"]  # a top-level relative import
    assert "dshctl.assembler" in GRAPH["dshctl.validate.settlement"]  # an absolute one


def test_no_import_cycle_among_dshctl_modules():
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


@pytest.mark.parametrize("leaf", LEAVES)
def test_leaf_modules_import_nothing_from_dshctl(leaf):
    assert leaf in GRAPH, f"{leaf} is gone: update LEAVES"
    assert GRAPH[leaf] == set(), f"{leaf} imports {sorted(GRAPH[leaf])}"


@pytest.mark.parametrize("importer, imported", FORBIDDEN)
def test_lower_layers_do_not_reach_up(importer, imported):
    assert imported not in _reachable(GRAPH, importer), f"{importer} reaches {imported}"


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"} - {"e"}}
    assert _cycles(graph) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_imports_inside_functions_and_type_checking_blocks_count():
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from dshctl.assembler import BlockAssembler\n"
        "def later():\n    from .. import reader\n    import dshctl.source.zstd\n"
        "from . import v0\n"
    )
    found = _imported("dshctl.generations.probe", False, source, set(GRAPH))
    assert found == {"dshctl.assembler", "dshctl.reader", "dshctl.source.zstd", "dshctl.generations.v0"}
