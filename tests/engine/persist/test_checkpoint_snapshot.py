"""The checkpoint format is the frozen :class:`CheckpointSnapshot` a run hands over, and nothing else.

The file's fields and version are pinned here together: a new field, a renamed one or a renamed
attribute of the run cannot change a checkpoint file without this test (and the version) changing too.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from pytest_agentloom import VirtualClock, load_workflow, resume_workflow, run_workflow
from pytest_agentloom._redaction.redactor import Redactor, make_marker
from pytest_agentloom.engine._outcome.result import StepResult, StepStatus
from pytest_agentloom.engine._persist.checkpoints import CHECKPOINT_FORMAT_VERSION, checkpoint_document
from pytest_agentloom.engine._run.checkpoint_snapshot import CheckpointSnapshot

#: these workflows (and upstream's, and the docs' one-step fragments) have gates whose decision no router
#: reads, on purpose; the warning itself is tested in tests/engine/format/test_unread_gates.py
pytestmark = pytest.mark.filterwarnings("ignore::pytest_agentloom.UnreadDecisionWarning")

SALT = "snapshot-tests"
CANARY = "sk-canary-5e6f7a8b9c"
FLOW = f"""\
name: deploy
state: {{api_key: {CANARY}, service: billing}}
state_schema: {{api_key: {{redact: true}}}}
steps:
  - {{id: plan, type: tool, tool_name: plan, tool_args: {{service: "{{state.service}}"}}, output: plan}}
  - {{id: gate, type: approval_gate, depends_on: [plan], message: Deploy?, output: decision}}
  - {{id: deploy, type: tool, tool_name: deploy, depends_on: [gate], tool_args: {{service: "{{state.service}}"}},
     output: result}}
"""
TOOLS = {"plan": lambda service: f"plan for {service}", "deploy": lambda service: f"deployed {service}"}

SNAPSHOT_FIELDS = ["run_id", "reason", "failed_step", "paused_step", "pending_approval", "steps",
                   "elapsed_seconds", "resumes", "workflow", "state"]
FILE_FIELDS = ["format_version", "kind", "run_id", "saved_at", "status", "reason", "failed_step", "paused_step",
               "pending_approval", "completed_steps", "elapsed_seconds", "resumes", "workflow", "state", "steps"]


def flow(tmp_path: Path) -> Path:
    path = tmp_path / "flow.yaml"
    path.write_text(FLOW)
    return path


def run(path: Path, runs: Path) -> Any:
    return run_workflow(path, tools=TOOLS, runs_dir=runs, redaction_salt=SALT, clock=VirtualClock(),
                        wall_clock=lambda: 1_700_000_000.0, run_id="run-snapshot")


def resume(checkpoint: Any, runs: Path) -> Any:
    return resume_workflow(checkpoint, tools=TOOLS, runs_dir=runs, redaction_salt=SALT, decision=True,
                           clock=VirtualClock(), wall_clock=lambda: 1_700_000_100.0)


def test_the_format_is_pinned_to_the_snapshot_fields_and_version():
    assert CHECKPOINT_FORMAT_VERSION == 1, "a new version: update FILE_FIELDS and SNAPSHOT_FIELDS with it"
    assert [field.name for field in dataclasses.fields(CheckpointSnapshot)] == SNAPSHOT_FIELDS
    assert CheckpointSnapshot.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_a_run_writes_exactly_the_pinned_fields(tmp_path):
    paused = run(flow(tmp_path), tmp_path / "runs")
    document = json.loads(Path(paused.checkpoint_path).read_text())
    assert sorted(document) == sorted(FILE_FIELDS)  # the file is written with sorted keys
    assert document["format_version"] == CHECKPOINT_FORMAT_VERSION
    assert document["state"]["api_key"] == make_marker(CANARY, salt=SALT.encode())  # still redacted


def test_the_writer_needs_no_run_only_the_snapshot(tmp_path):
    """A snapshot made by hand (no Run object at all) gives the file: the run's attribute names never reach it."""
    workflow = load_workflow(flow(tmp_path))
    plan = StepResult(step_id="plan", status=StepStatus.SUCCESS, output="plan for billing")
    snapshot = CheckpointSnapshot(
        run_id="by-hand", reason="completed", failed_step=None, paused_step=None, pending_approval=None,
        steps=MappingProxyType({"plan": plan}), elapsed_seconds=1.25, resumes=0, workflow=workflow,
        state=MappingProxyType({"api_key": CANARY, "service": "billing", "plan": "plan for billing"}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        snapshot.run_id = "other"  # type: ignore[misc]
    document = checkpoint_document(snapshot, status="success", redactor=Redactor(["api_key"], salt=SALT),
                                   hash="sha256:0", saved_at=1_700_000_000.0)
    assert list(document) == FILE_FIELDS
    assert (document["run_id"], document["completed_steps"], document["elapsed_seconds"]) == ("by-hand", ["plan"], 1.25)
    assert CANARY not in json.dumps(document)


def test_resuming_from_the_written_file_gives_the_same_result_as_from_the_run(tmp_path):
    paused = run(flow(tmp_path), tmp_path / "runs")
    copy = tmp_path / "saved" / "run-snapshot.json"
    copy.parent.mkdir()
    shutil.copyfile(paused.checkpoint_path, copy)  # the bytes on disk, before the resume settles them
    from_run = resume(paused, tmp_path / "runs")
    from_file = resume(copy, tmp_path / "runs-again")
    assert from_run.status.value == from_file.status.value == "success"
    assert from_file.state == from_run.state
    assert {sid: step.output for sid, step in from_file.steps.items()} == \
        {sid: step.output for sid, step in from_run.steps.items()}
    assert from_file.state["result"] == "deployed billing"
