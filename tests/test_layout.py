"""The rooms of the package: no import circle at all, not even one that only a type checker follows.

``lint-imports`` (contracts in ``pyproject.toml``) keeps the layers and the rooms of ``engine/`` and
``testing/`` pointing down, and finds no cycle among siblings, but it leaves out imports under
``if TYPE_CHECKING:``. A circle of those is still a circle for a reader (and for a type checker), so this
test follows every import written in a module, wherever it is: at the top, in a function, or for type
checkers only. Importing one's own package (``from .. import __version__``) is no edge.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_agentloom"
ROOT = PACKAGE.name


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


MODULES = _modules()


def _targets(name: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The modules of the package one import statement names (a submodule when it imports one by name)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names if alias.name.split(".")[0] == ROOT)
        return
    base = name.split(".") if is_package else name.split(".")[:-1]
    if node.level:
        base = base[: len(base) - (node.level - 1)]
        target = ".".join([*base, node.module] if node.module else base)
    else:
        target = node.module or ""
    if target.split(".")[0] != ROOT:
        return
    for alias in node.names:
        yield f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULES else target


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules it imports, at run time or for type checkers (package ``__init__`` files included)."""
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, (path, is_package) in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _targets(name, is_package, node):
                    if target in MODULES and target != name and not name.startswith(target + "."):
                        graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_two_modules_import_each_other_not_even_for_type_checkers() -> None:
    graph = import_graph()
    shown = [" -> ".join(component) for component in cycles(graph)]
    assert shown == []


def test_type_checking_imports_are_followed() -> None:
    """The graph sees an import a type checker follows: the engine's ``__init__`` names its modules that way."""
    assert "pytest_agentloom.engine._entry.run_workflow" in import_graph()["pytest_agentloom.engine"]


def test_the_cycle_finder_finds_a_circle_and_ignores_a_chain() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
