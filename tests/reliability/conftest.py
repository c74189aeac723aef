"""Shared pieces of the reliability tests: a finished run to snapshot, and the CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pytest_agentloom
from pytest_agentloom import Scripted, run_workflow
from pytest_agentloom.testing._snapshots.compare import SnapshotSession

FLOW = "name: f\nsteps:\n  - {id: s, type: llm_call, model: m, prompt: hi, output: o}\n"


@pytest.fixture
def snapshot_run(tmp_path: Path) -> Callable[..., tuple[SnapshotSession, Any]]:
    """``(session, result)``: a snapshot session (updating or not) and a finished run to compare."""
    (tmp_path / "flow.yaml").write_text(FLOW)
    result = run_workflow(tmp_path / "flow.yaml", provider=Scripted({"s": "hi"}), runs_dir=False)

    def make(*, update: bool) -> tuple[SnapshotSession, Any]:
        return SnapshotSession(update=update), result

    return make


@pytest.fixture
def cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``agentloom ARGS`` run in ``tmp_path`` with a fixed salt."""

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        root = str(Path(pytest_agentloom.__file__).parents[1])  # this checkout, not another installed copy
        env = {**os.environ, "AGENTLOOM_REDACTION_SALT": "reliability",
               "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
        for name in ("AGENTLOOM_RUNS_DIR", "AGENTLOOM_CHECKPOINT_DIR"):
            env.pop(name, None)
        return subprocess.run([sys.executable, "-m", "pytest_agentloom.cli", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)

    return call
