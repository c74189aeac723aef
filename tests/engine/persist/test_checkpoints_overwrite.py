"""Checkpoints never replace a file agentloom did not write (engine/_persist/checkpoints.check_checkpoint_target).

A run id names the checkpoint file as it names the run record, so ``--run-id package --checkpoint-dir .`` must
not cost a ``package.json`` either.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_agentloom import Scripted, run_workflow
from pytest_agentloom.errors import UsageError

#: these workflows (and upstream's, and the docs' one-step fragments) have gates whose decision no router
#: reads, on purpose; the warning itself is tested in tests/engine/format/test_unread_gates.py
pytestmark = pytest.mark.filterwarnings("ignore::pytest_agentloom.UnreadDecisionWarning")

FLOW = "name: noop\nsteps:\n  - {id: say, type: llm_call, model: gpt-4o-mini, prompt: hi, output: said}\n"
GATED = ("name: gated\nsteps:\n  - {id: say, type: llm_call, model: gpt-4o-mini, prompt: hi, output: said}\n"
         "  - {id: gate, type: approval_gate, message: Ship?, depends_on: [say]}\n")
PACKAGE = '{"name": "my-app", "version": "1.0.0"}\n'


def write_flow(tmp_path: Path, text: str = FLOW) -> Path:
    path = tmp_path / "flow.yaml"
    path.write_text(text)
    return path


def test_a_checkpoint_does_not_replace_a_file_of_its_name(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text(PACKAGE)
    script = Scripted({"say": ["hello"]})
    with pytest.raises(UsageError) as info:
        run_workflow(write_flow(tmp_path), provider=script, run_id="package", checkpoint_dir=tmp_path, runs_dir=False)
    message = str(info.value)
    assert "package.json would replace a file that is not a checkpoint agentloom wrote" in message
    assert "--run-id" in message and "--checkpoint-dir" in message
    assert (tmp_path / "package.json").read_text() == PACKAGE
    assert script.requests == []  # refused before anything ran


def test_a_paused_run_without_checkpointing_refuses_too(tmp_path: Path) -> None:
    folder = tmp_path / "cps"
    folder.mkdir()
    (folder / "package.json").write_text(PACKAGE)
    flow = write_flow(tmp_path, GATED)
    with pytest.raises(UsageError):
        run_workflow(flow, provider=Scripted({"say": ["hello"]}), run_id="package", runs_dir=False,
                     env={**os.environ, "AGENTLOOM_CHECKPOINT_DIR": str(folder)})
    assert (folder / "package.json").read_text() == PACKAGE


@pytest.mark.parametrize("kind", ["link", "folder", "empty", "record"])
def test_links_folders_empty_files_and_records_are_not_checkpoints(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "cps" / "r1.json"
    target.parent.mkdir()
    if kind == "link":
        (tmp_path / "elsewhere.json").write_text('{"kind": "agentloom.checkpoint"}')
        target.symlink_to(tmp_path / "elsewhere.json")
    elif kind == "folder":
        target.mkdir()
    elif kind == "record":
        target.write_text('{"kind": "agentloom.run_record"}')
    else:
        target.write_text("")
    with pytest.raises(UsageError):
        run_workflow(write_flow(tmp_path), provider=Scripted({"say": ["hi"]}), run_id="r1",
                     checkpoint_dir=target.parent, runs_dir=False)


def test_a_checkpoint_replaces_an_earlier_checkpoint_and_resumes(tmp_path: Path) -> None:
    flow = write_flow(tmp_path, GATED)
    for _ in range(2):
        paused = run_workflow(flow, provider=Scripted({"say": ["hello"]}), run_id="again", checkpoint_dir=tmp_path,
                              runs_dir=False)
        assert paused.status == "paused"
    assert json.loads((tmp_path / "again.json").read_text())["kind"] == "agentloom.checkpoint"


@pytest.mark.slow
def test_the_command_line_refuses_with_exit_code_2(tmp_path: Path) -> None:
    write_flow(tmp_path)
    (tmp_path / "package.json").write_text(PACKAGE)
    (tmp_path / "script.json").write_text('{"say": ["hello"]}')
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTLOOM_")}
    command = [sys.executable, "-m", "pytest_agentloom.cli", "run", "flow.yaml", "--run-id", "package",
               "--checkpoint-dir", ".", "--runs-dir", "runs", "--script", "script.json"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "package.json would replace a file that is not a checkpoint" in done.stderr
    assert (tmp_path / "package.json").read_text() == PACKAGE
