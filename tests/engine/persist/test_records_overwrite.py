"""Run records never replace a file agentloom did not write (engine/_outcome/held_records.write_record_file)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_agentloom import Scripted, run_workflow
from pytest_agentloom.engine._outcome.held_records import HeldRecords
from pytest_agentloom.errors import UsageError

FLOW = "name: noop\nsteps:\n  - {id: say, type: llm_call, model: gpt-4o-mini, prompt: hi, output: said}\n"


@pytest.fixture
def flow(tmp_path: Path) -> Path:
    path = tmp_path / "flow.yaml"
    path.write_text(FLOW)
    return path


def run(flow: Path, **options: object) -> object:
    return run_workflow(flow, provider=Scripted({"say": ["hello"]}), **options)


def test_a_record_does_not_replace_a_file_of_its_name(flow: Path, tmp_path: Path) -> None:
    package = tmp_path / "package.json"
    package.write_text('{"name": "my-app", "version": "1.0.0"}\n')
    with pytest.raises(UsageError) as info:
        run(flow, run_id="package", runs_dir=tmp_path)
    assert "is not a run record agentloom wrote; it is left as it is" in str(info.value)
    assert "How to fix" in str(info.value) and "--run-id" in str(info.value)
    assert info.value.code == "usage_error"
    assert package.read_text() == '{"name": "my-app", "version": "1.0.0"}\n'


def test_the_refusal_comes_before_anything_runs(flow: Path, tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text("{}")
    script = Scripted({"say": ["hello"]})
    with pytest.raises(UsageError):
        run_workflow(flow, provider=script, run_id="package", runs_dir=tmp_path)
    assert script.requests == []


@pytest.mark.parametrize("kind", ["link", "folder", "empty"])
def test_links_folders_and_empty_files_are_not_records_either(flow: Path, tmp_path: Path, kind: str) -> None:
    target = tmp_path / "runs" / "r1.json"
    target.parent.mkdir()
    if kind == "link":
        (tmp_path / "elsewhere.json").write_text('{"kind": "agentloom.run_record"}')
        target.symlink_to(tmp_path / "elsewhere.json")
    elif kind == "folder":
        target.mkdir()
    else:
        target.write_text("")
    with pytest.raises(UsageError):
        run(flow, run_id="r1", runs_dir=tmp_path / "runs")


def test_a_record_replaces_an_earlier_record_of_the_same_run(flow: Path, tmp_path: Path) -> None:
    first = run(flow, run_id="again", runs_dir=tmp_path)
    second = run(flow, run_id="again", runs_dir=tmp_path)
    assert first.record_path == second.record_path  # type: ignore[attr-defined]
    assert json.loads((tmp_path / "again.json").read_text())["kind"] == "agentloom.run_record"


def test_held_records_refuse_too_when_released(flow: Path, tmp_path: Path) -> None:
    (tmp_path / "held.json").write_text("not a record")
    held = HeldRecords(tmp_path)
    run(flow, run_id="held", runs_dir=held)  # held in memory: nothing written yet
    with pytest.raises(UsageError):
        held.release()
    assert (tmp_path / "held.json").read_text() == "not a record"


@pytest.mark.slow
def test_the_command_line_refuses_with_exit_code_2(flow: Path, tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"name": "my-app"}\n')
    (tmp_path / "script.json").write_text('{"say": ["hello"]}')
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTLOOM_")}
    command = [sys.executable, "-m", "pytest_agentloom.cli", "run", str(flow), "--run-id", "package",
               "--runs-dir", ".", "--script", "script.json"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "package.json would replace a file that is not a run record" in done.stderr
    assert (tmp_path / "package.json").read_text() == '{"name": "my-app"}\n'
