"""The public names: one list per package, sorted, importable, documented, used by the docs, and cheap to import.

Which modules are public is written down once, in :mod:`tests.public_surface` (``PUBLIC_MODULES``); every
other module has a name or folder starting with ``_``. Each public package names its exports once (its
``_EXPORTS`` table, from which ``__all__`` comes); the imports a type checker reads are checked against it.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pytest_agentloom
from tests.public_surface import API_PAGE, ENTRY_POINTS, PUBLIC_MODULES, render

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("openai", "anthropic", "vcr", "deepdiff", "pytest")

# What issue 2 promises users and later issues.
PROMISED = {
    "load_workflow", "run_workflow", "arun_workflow", "Workflow", "WorkflowResult", "StepResult", "WorkflowError",
    "Scripted", "reply", "tool_call", "error", "VirtualClock",
}


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_all_is_sorted_and_every_name_is_importable(module_name: str) -> None:
    module = importlib.import_module(module_name)
    names = list(module.__all__)

    assert names == sorted(names)
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(module, name), f"{module_name}.{name} is in __all__ but not defined"


def test_the_promised_names_are_public() -> None:
    assert set(pytest_agentloom.__all__) >= PROMISED


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from pytest_agentloom import *", namespace)

    assert set(namespace) - {"__builtins__"} == set(pytest_agentloom.__all__)


def _modules_after(code: str) -> list[str]:
    """Run ``code`` in a fresh interpreter and answer which heavy modules it left in ``sys.modules``."""
    probe = textwrap.dedent(code) + textwrap.dedent(
        f"""
        import json, sys
        print(json.dumps([name for name in {HEAVY!r} if name in sys.modules]))
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False, timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_importing_the_package_loads_no_sdk_and_not_pytest() -> None:
    assert _modules_after("import pytest_agentloom") == []


def test_running_a_scripted_workflow_loads_no_sdk_and_not_pytest() -> None:
    loaded = _modules_after(
        """
        from pytest_agentloom import Scripted, VirtualClock, run_workflow
        from pytest_agentloom.engine import parse_workflow
        workflow = parse_workflow(
            "name: t\\nconfig: {model: gpt-4o}\\nsteps:\\n"
            "  - {id: a, type: llm_call, prompt: hi}\\n"
            "  - {id: b, type: tool, tool_name: t, depends_on: [a]}\\n"
            "  - {id: r, type: router, default: b2, depends_on: [b]}\\n"
            "  - {id: b2, type: tool, tool_name: t}\\n"
        )
        result = run_workflow(workflow, provider=Scripted({"a": "x"}), tools={"t": lambda: 1}, clock=VirtualClock(),
                              runs_dir=False)
        assert result.ok, result.to_json()
        """
    )
    assert loaded == []


def test_loading_the_plugin_builds_no_workflow_model() -> None:
    """Every pytest run loads the plugin: the engine's models and runner wait until a test needs them."""
    probe = (
        "import json, sys, pytest_agentloom.plugin\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('pytest_agentloom.engine._format.model',"
        " 'pytest_agentloom.engine._entry.run_workflow', 'pytest_agentloom.providers',"
        " 'openai', 'anthropic', 'vcr', 'deepdiff')))))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False, timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout.strip().splitlines()[-1]) == []


# -- which modules are public, and one list per package ----------------------------------------------------

PACKAGE = ROOT / "pytest_agentloom"


def _module_names() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_a_module_is_public_or_its_name_says_it_is_internal() -> None:
    """From the tree alone: a module (or a folder it is in) whose name starts with ``_`` is internal."""
    public = {*PUBLIC_MODULES, *ENTRY_POINTS}
    unmarked = [name for name in _module_names() if name not in public
                and not any(part.startswith("_") for part in name.split(".")[1:])]
    assert unmarked == []
    assert all(name in _module_names() for name in public)


def _table_and_type_imports(module_name: str) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """``(module, name)`` pairs of a package's ``_EXPORTS`` table, and of its ``if TYPE_CHECKING:`` imports."""
    tree = ast.parse((PACKAGE.parent / module_name.replace(".", "/") / "__init__.py").read_text(encoding="utf-8"))
    table: set[tuple[str, str]] = set()
    typed: set[tuple[str, str]] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_EXPORTS" for t in node.targets):
            table = {(module, name) for module, names in ast.literal_eval(node.value).items() for name in names}
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for item in node.body:
                assert isinstance(item, ast.ImportFrom), f"{module_name}: only imports under TYPE_CHECKING"
                for alias in item.names:
                    assert alias.asname == alias.name, f"{module_name}: import {alias.name} as {alias.name}"
                    typed.add(("." * item.level + (item.module or ""), alias.name))
    return table, typed


@pytest.mark.parametrize("module_name", [name for name in PUBLIC_MODULES if name != "pytest_agentloom.errors"])
def test_each_public_package_names_its_exports_once(module_name: str) -> None:
    """``__all__`` comes from the lazy table; what a type checker sees is that table, name for name."""
    table, typed = _table_and_type_imports(module_name)
    assert table, f"{module_name} has no _EXPORTS table"
    assert typed == table, "the TYPE_CHECKING imports differ from _EXPORTS: " + ", ".join(
        f"{'+' if pair in typed else '-'}{pair}" for pair in sorted(typed ^ table))
    module = importlib.import_module(module_name)
    assert set(module.__all__) - {"__version__"} == {name for _, name in table}


def test_the_api_page_lists_every_public_name() -> None:
    """docs/api.md is generated from the code: regenerate it with ``python -m tests.public_surface``."""
    assert API_PAGE.read_text(encoding="utf-8") == render()


# -- docs and examples import only public names -----------------------------------------------------------

FENCE = re.compile(r"^(?P<indent>[ ]*)```python\n(?P<body>.*?)^(?P=indent)```", re.MULTILINE | re.DOTALL)


def _example_sources() -> list[tuple[str, str]]:
    """Every Python a user reads: the README's and docs' Python blocks, and the example projects' files."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            indent = len(match["indent"])
            body = "\n".join(row[indent:] for row in match["body"].splitlines())
            found.append((f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, match.start()) + 1}", body))
    for path in sorted([*(ROOT / "examples").rglob("*.py"), *(ROOT / "docs").rglob("*.py")]):
        found.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    return found


def private_imports(source: str) -> list[str]:
    """The imports of ``source`` that reach past the public surface: a module not in it, a name not listed."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names
                      if alias.name.split(".")[0] == "pytest_agentloom" and alias.name not in PUBLIC_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pytest_agentloom":
            if node.module not in PUBLIC_MODULES:
                found.append(str(node.module))
                continue
            listed = importlib.import_module(node.module).__all__
            found += [f"{node.module}.{alias.name}" for alias in node.names if alias.name not in listed]
    return found


def test_docs_and_examples_import_only_public_names() -> None:
    sources = _example_sources()
    assert len(sources) > 20  # the README's blocks and the example projects were found
    reached = {where: private for where, source in sources if (private := private_imports(source))}
    assert reached == {}


def test_the_import_check_finds_a_private_module_and_an_unlisted_name() -> None:
    assert private_imports("from pytest_agentloom.engine._format.loader import load_workflow") == [
        "pytest_agentloom.engine._format.loader"]
    assert private_imports("from pytest_agentloom.testing import AgentloomHarness, _harness") == [
        "pytest_agentloom.testing._harness"]
    assert private_imports("import pytest_agentloom.engine\nfrom pytest_agentloom import run_workflow") == []


def test_dir_of_a_public_package_shows_its_names_not_its_own_imports() -> None:
    import pytest_agentloom
    import pytest_agentloom.providers
    import pytest_agentloom.tools

    for package in (pytest_agentloom, pytest_agentloom.providers, pytest_agentloom.tools):
        shown = dir(package)
        assert not {"TYPE_CHECKING", "annotations", "attach"} & set(shown), package.__name__
        assert set(package.__all__) <= set(shown)
    assert "Scripted" in dir(pytest_agentloom) and "__version__" in dir(pytest_agentloom)
    assert "providers" in dir(pytest_agentloom)  # a public subpackage, once imported
