"""The public names: sorted, importable, and cheap to import (no SDKs, no pytest in the engine)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pytest_agentloom

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("openai", "anthropic", "vcr", "deepdiff", "pytest")

# What issue 2 promises users and later issues.
PROMISED = {
    "load_workflow", "run_workflow", "arun_workflow", "Workflow", "WorkflowResult", "StepResult", "WorkflowError",
    "Scripted", "reply", "tool_call", "error", "VirtualClock",
}


@pytest.mark.parametrize("module_name", ["pytest_agentloom", "pytest_agentloom.engine", "pytest_agentloom.providers",
                                         "pytest_agentloom.errors", "pytest_agentloom.replay",
                                         "pytest_agentloom.testing"])
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
