"""The shape of the package, kept: no import cycles, no module reaching into another's private names.

``lint-imports`` (contracts in ``pyproject.toml``) keeps the layers pointing down; this test adds what it
does not check. Imports inside functions count (they run, just later); imports under ``if TYPE_CHECKING:``
don't (they never run). Importing ``a.b.c`` also runs the ``__init__`` of ``a.b``, so that counts as an
import of the package too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.import_cycles import cycles

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_agentloom"
ROOT = PACKAGE.name


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool


def _modules() -> dict[str, Module]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = Module(".".join(parts), path, is_package)
    return found


MODULES = _modules()


def _absolute(module: Module, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = module.name.split(".")
    if not module.is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that runs, at any depth (skipping ``if TYPE_CHECKING:`` bodies)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child):
            yield from (item for branch in child.orelse for item in _imports_in(branch))
            continue
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        yield from _imports(child)


def _imports_in(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    yield from _imports(node)


@dataclass(frozen=True)
class Imported:
    importer: str
    module: str  # the module that is imported (or that the names come from)
    names: tuple[str, ...]  # names taken from it, for ``from module import names``
    line: int


def _imported(module: Module) -> Iterator[Imported]:
    tree = ast.parse(module.path.read_text(encoding="utf-8"))
    for node in _imports(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == ROOT:
                    yield Imported(module.name, alias.name, (), node.lineno)
            continue
        target = _absolute(module, node.level, node.module)
        if target.split(".")[0] != ROOT:
            continue
        submodules = [alias.name for alias in node.names if f"{target}.{alias.name}" in MODULES]
        for name in submodules:
            yield Imported(module.name, f"{target}.{name}", (), node.lineno)
        names = tuple(alias.name for alias in node.names if alias.name not in submodules)
        if names:
            yield Imported(module.name, target, names, node.lineno)


def _graph() -> dict[str, set[str]]:
    """Module -> the modules its imports run (their parent packages' ``__init__`` included)."""
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for module in MODULES.values():
        for item in _imported(module):
            parts = item.module.split(".")
            for depth in range(2, len(parts) + 1):  # the package inits, then the module itself
                target = ".".join(parts[:depth])
                if target in MODULES and target != module.name and not module.name.startswith(target + "."):
                    graph[module.name].add(target)
    return graph


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_of_the_package_is_in_an_import_cycle() -> None:
    assert cycles(_graph()) == []


def test_no_module_imports_a_private_name_of_another() -> None:
    offenders = [f"{item.importer}:{item.line} imports {name} from {item.module}"
                 for module in MODULES.values() for item in _imported(module)
                 for name in item.names if _private(name) and item.module != item.importer]
    assert offenders == []


def test_no_module_reads_a_private_attribute_of_an_imported_module() -> None:
    offenders = []
    for module in MODULES.values():
        tree = ast.parse(module.path.read_text(encoding="utf-8"))
        aliases = {}  # local name -> module, for ``import x.y as z`` and ``from x import submodule``
        for item in _imported(module):
            if not item.names:
                aliases[item.module.rsplit(".", 1)[-1]] = item.module
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases):
                offenders.append(f"{module.name}:{node.lineno} reads {aliases[node.value.id]}.{node.attr}")
    assert offenders == []


# -- the checks themselves, on made-up modules ------------------------------------------------------------


def test_the_cycle_finder_finds_a_cycle_and_ignores_a_chain() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


@pytest.mark.parametrize(("source", "expected"), [
    ("def f():\n    from pytest_agentloom.engine._run import loop\n", ["pytest_agentloom.engine._run.loop"]),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pytest_agentloom.engine._run import loop\n", []),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n    import pytest_agentloom.errors\n",
     ["pytest_agentloom.errors"]),
])
def test_imports_inside_functions_count_and_type_checking_ones_do_not(tmp_path: Path, source: str,
                                                                       expected: list[str]) -> None:
    path = tmp_path / "probe.py"
    path.write_text(source, encoding="utf-8")
    module = Module(f"{ROOT}.probe", path, is_package=False)
    assert [item.module for item in _imported(module)] == expected


def _own_private_names(tree: ast.AST) -> set[str]:
    """Private names a module defines itself: functions, classes, class attributes, ``self._x`` attributes."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if _private(name)}


#: Names with a leading underscore that are public API: namedtuple's methods and fields (urllib's SplitResult).
NAMEDTUPLE_API = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})

#: The one module allowed to touch private names of other libraries, each with a documented reason, a
#: public fallback, an upper version bound and a test that fails when the library changes (none so far).
COMPAT_MODULE = f"{ROOT}._core.compat"


def test_no_module_reads_a_private_attribute_another_module_defines() -> None:
    offenders = []
    for module in MODULES.values():
        tree = ast.parse(module.path.read_text(encoding="utf-8"))
        own = _own_private_names(tree) | NAMEDTUPLE_API
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in own
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                offenders.append(f"{module.name}:{node.lineno} reads .{node.attr}")
    assert offenders == []


# -- other libraries' private names: none read, none imported (but in _core/compat.py) ---------------------------

_NAME_FUNCTIONS = ("getattr", "hasattr", "setattr", "delattr")


def _defined_names(trees: list[ast.AST]) -> set[str]:
    """Every name the package defines somewhere: functions, classes, assigned names and attributes, arguments,
    import aliases. A private name read that is none of these belongs to another library (or CPython)."""
    names = set(NAMEDTUPLE_API)
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[0])
    return names


def foreign_private_uses(sources: dict[str, str]) -> list[str]:
    """``module:line what`` for each use of another library's private name in ``sources`` (module name ->
    source): an attribute read (``self._x`` included, for a subclass of another library's class), a
    ``getattr``/``hasattr``/``setattr``/``delattr`` with a constant name, ``from x import _y`` of a module
    outside the package, and ``import x._y``. :data:`COMPAT_MODULE` may; the checks above cover the package's
    own private names between its modules."""
    trees = {name: ast.parse(source) for name, source in sources.items()}
    defined = _defined_names(list(trees.values()))
    found = []
    for module, tree in sorted(trees.items()):
        if module == COMPAT_MODULE:
            continue
        for node in ast.walk(tree):
            name, what = None, ""
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                name, what = node.attr, f"reads .{node.attr}"
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _NAME_FUNCTIONS
                  and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
                  and isinstance(node.args[1].value, str)):
                name, what = node.args[1].value, f"{node.func.id}(..., {node.args[1].value!r})"
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] != ROOT:
                found += [f"{module}:{node.lineno} imports {node.module}.{alias.name}"
                          for alias in node.names if _private(alias.name)]
                found += [f"{module}:{node.lineno} imports {node.module}"
                          for part in (node.module or "").split(".") if _private(part)][:1]
            elif isinstance(node, ast.Import):
                found += [f"{module}:{node.lineno} imports {alias.name}" for alias in node.names
                          if any(_private(part) for part in alias.name.split("."))]
            if name is not None and _private(name) and name not in defined:
                found.append(f"{module}:{node.lineno} {what}")
    return found


def test_no_module_uses_another_librarys_private_names() -> None:
    sources = {module.name: module.path.read_text(encoding="utf-8") for module in MODULES.values()}
    assert foreign_private_uses(sources) == []


@pytest.mark.parametrize(("source", "expected"), [
    ("import asyncio\nlive = getattr(asyncio.tasks, '_all_tasks', None)\n", "getattr(..., '_all_tasks')"),
    ("import os\nraw = hasattr(os.environ, '_data')\n", "hasattr(..., '_data')"),
    ("import _signal\n", "imports _signal"),
    ("from asyncio.tasks import _all_tasks\n", "imports asyncio.tasks._all_tasks"),
    ("from asyncio import _get_running_loop as running\n", "imports asyncio._get_running_loop"),
    ("from concurrent.futures import _base\n", "imports concurrent.futures._base"),
    ("import json.decoder as d\nfrom json._private import x\n", "imports json._private"),
    ("def f(request):\n    return request._fixturemanager\n", "reads ._fixturemanager"),
    ("class C(Base):\n    def f(self):\n        return self._match_on\n", "reads ._match_on"),
])
def test_each_form_of_a_foreign_private_use_is_caught(source: str, expected: str) -> None:
    """The forms the package used before it kept to public APIs (engine/_entry/sync.py, _redaction/api_keys.py,
    testing/_session.py, replay/_cassette.py), each found; a name the package defines itself is not."""
    found = foreign_private_uses({f"{ROOT}.probe": source})
    assert len(found) == 1 and found[0].endswith(expected), found
    own = "class D:\n    def __init__(self):\n        self._mine = 1\n\n    def f(self):\n        return self._mine\n"
    assert foreign_private_uses({f"{ROOT}.probe": source, f"{ROOT}.own": own}) == found
    assert foreign_private_uses({COMPAT_MODULE: source}) == []
    named = "import urllib.parse\nparts = urllib.parse.urlsplit('x')._replace(query='')\n"
    assert foreign_private_uses({f"{ROOT}.probe": named}) == []
