"""The rooms of the package: no import circle and no import upwards, not even one only a type checker follows.

``lint-imports`` (contracts in ``pyproject.toml``) keeps the layers and the rooms of ``engine/`` and
``testing/`` pointing down, and finds no cycle among siblings, but it leaves out imports under
``if TYPE_CHECKING:``. Such an import is still a tie for a reader (and for a type checker), so these
tests follow every import written in a module, wherever it is: at the top, in a function, or for type
checkers only. Importing one's own package (``from .. import __version__``) is no edge. The layers are
those of the contracts, read from ``pyproject.toml``.
"""

from __future__ import annotations

import ast
import functools
import re
import tomllib
from collections.abc import Iterator, Mapping, Set
from pathlib import Path

from tests.import_cycles import cycles

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


@functools.cache
def import_graph() -> dict[str, frozenset[str]]:
    """Module -> the modules it imports, at run time or for type checkers (package ``__init__`` files included)."""
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, (path, is_package) in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _targets(name, is_package, node):
                    if target in MODULES and target != name and not name.startswith(target + "."):
                        graph[name].add(target)
    return {name: frozenset(targets) for name, targets in graph.items()}


def test_no_two_modules_import_each_other_not_even_for_type_checkers() -> None:
    graph = import_graph()
    shown = [" -> ".join(component) for component in cycles(graph)]
    assert shown == []


def layer_rules() -> list[tuple[str, list[set[str]]]]:
    """Each layers contract as (container, [names of each layer, top first])."""
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    rules = []
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] != "layers":
            continue
        layers = [{name.strip() for name in re.split(r"[|:]", layer)} for layer in contract["layers"]]
        for container in contract.get("containers", [""]):
            rules.append((container, layers))
    return rules


def upward_imports(graph: Mapping[str, Set[str]], rules: list[tuple[str, list[set[str]]]]) -> list[str]:
    """Imports from a layer to one above it (a module imports what it holds, and the modules under it)."""
    def layer_of(module: str, container: str, layers: list[set[str]]) -> int | None:
        prefix = f"{container}." if container else ""
        if not module.startswith(prefix):
            return None
        for index, names in enumerate(layers):
            for name in names:
                full = prefix + name if container else name
                if module == full or module.startswith(full + "."):
                    return index
        return None

    found = []
    for importer, targets in sorted(graph.items()):
        for target in sorted(targets):
            for container, layers in rules:
                low, high = layer_of(importer, container, layers), layer_of(target, container, layers)
                if low is not None and high is not None and high < low:
                    found.append(f"{importer} -> {target}")
    return found


def test_no_module_imports_a_layer_above_it_not_even_for_type_checkers() -> None:
    """The package's ``__init__`` files name their public modules for type checkers: they are no layer."""
    graph = {name: targets for name, targets in import_graph().items() if not MODULES[name][1]}
    assert upward_imports(graph, layer_rules()) == []


def test_the_upward_finder_reads_the_contracts_and_finds_an_upward_import() -> None:
    rules = layer_rules()
    assert ("pytest_agentloom.engine", [{"_entry"}, {"_persist"}, {"_run"}, {"_steps"}, {"_calls"}, {"_outcome"},
                                        {"_format"}, {"_evaluate"}]) in rules
    graph = {"pytest_agentloom.engine._format.model": {"pytest_agentloom.engine._run.loop"},
             "pytest_agentloom.engine._run.loop": {"pytest_agentloom.engine._format.model"}}
    assert upward_imports(graph, rules) == [
        "pytest_agentloom.engine._format.model -> pytest_agentloom.engine._run.loop"]


def test_type_checking_imports_are_followed() -> None:
    """The graph sees an import a type checker follows: the engine's ``__init__`` names its modules that way."""
    assert "pytest_agentloom.engine._entry.run_workflow" in import_graph()["pytest_agentloom.engine"]


def test_the_cycle_finder_finds_a_circle_and_ignores_a_chain() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
