"""A process that ran workflows ends quietly: no "Exception ignored" at exit, on Python 3.11 and 3.12+.

The runs of a process share one event loop (``engine/_entry/sync.py``). Closing it shuts its default executor
down, which starts a thread; from Python 3.12 on, a thread can no longer start at interpreter exit, so a
loop closed by an ``atexit`` hook the way ``asyncio.Runner.close`` does it printed "Exception ignored in
atexit callback ... RuntimeError: can't create new thread at interpreter shutdown" after every pytest
session. Each case here runs a workflow whose provider uses the default executor (as the SDKs do, for
their blocking calls) in a child process: a pytest session, and a plain script.

Under Python 3.11 the 3.12 case runs in a virtual environment made once for this module from the
pyenv interpreter (about a minute); it is skipped when that interpreter is not installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # pytest sessions and scripts in subprocesses; under 3.11 a 3.12 venv made first

REPO = Path(__file__).resolve().parents[2]
PYTHON_312 = Path("/root/.pyenv/versions/3.12.1/bin/python")

WORKFLOW = """\
name: at-exit
config:
  model: m
steps:
  - id: answer
    type: llm_call
    prompt: "hello"
    output: answer
"""

PROVIDER = """\
import asyncio

from pytest_agentloom import Scripted


async def through_the_executor(request):
    return await asyncio.get_running_loop().run_in_executor(None, str, "done")


def provider():
    return Scripted({"answer": through_the_executor})
"""

TEST_FILE = """\
from helper import provider


def test_runs(agentloom):
    assert agentloom.run("flow.yaml", provider=provider()).state["answer"] == "done"


def test_runs_again(agentloom):
    assert agentloom.run("flow.yaml", provider=provider()).state["answer"] == "done"
"""

SCRIPT = """\
from helper import provider
from pytest_agentloom import run_workflow

for _ in range(2):
    assert run_workflow("flow.yaml", provider=provider()).state["answer"] == "done"
print("ran")
"""


@pytest.fixture(scope="module")
def python_312(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Python 3.12 that has pytest_agentloom: this one, or a virtual environment made for the module."""
    if sys.version_info >= (3, 12):
        return sys.executable
    if not PYTHON_312.is_file():
        pytest.skip(f"no Python 3.12 at {PYTHON_312}: the 3.12 case runs only where pyenv installed it")
    home = tmp_path_factory.mktemp("py312")
    made = subprocess.run([str(PYTHON_312), "-m", "venv", str(home)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    python = str(home / "bin" / "python")
    installed = subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", str(REPO)],
                               capture_output=True, text=True)
    assert installed.returncode == 0, f"pip could not install the package for Python 3.12:\n{installed.stderr}"
    return python


def _project(folder: Path) -> Path:
    (folder / "flow.yaml").write_text(WORKFLOW, encoding="utf-8")
    (folder / "helper.py").write_text(PROVIDER, encoding="utf-8")
    (folder / "test_flow.py").write_text(TEST_FILE, encoding="utf-8")
    (folder / "script.py").write_text(SCRIPT, encoding="utf-8")
    return folder


def _run(python: str, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(folder)}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run([python, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def _ends_quietly(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Exception ignored" not in result.stderr, result.stderr
    assert "Traceback" not in result.stderr, result.stderr


@pytest.fixture(params=["this Python", "Python 3.12"])
def python(request: pytest.FixtureRequest) -> str:
    if request.param == "this Python":
        return sys.executable
    return str(request.getfixturevalue("python_312"))


def test_a_pytest_session_that_ran_workflows_ends_without_an_ignored_exception(python: str, tmp_path: Path) -> None:
    result = _run(python, _project(tmp_path), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                  "-p", "no:xdist", "test_flow.py")
    _ends_quietly(result)
    assert "2 passed" in result.stdout


def test_a_plain_script_that_ran_workflows_ends_without_an_ignored_exception(python: str, tmp_path: Path) -> None:
    result = _run(python, _project(tmp_path), "-W", "error::ResourceWarning", "script.py")
    _ends_quietly(result)
    assert result.stdout.strip() == "ran"

