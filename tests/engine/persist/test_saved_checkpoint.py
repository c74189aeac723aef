"""Reading a checkpoint yields a frozen :class:`SavedCheckpoint`, which writes the same file again.

The writer's side is pinned in test_checkpoint_snapshot.py; this is the reader's: the value read has
the file's fields (no more, no fewer), nothing in it can be changed, a resume is built from it, and
writing it back (as a failed resume does) gives the bytes it was read from.
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
from pytest_agentloom._core.files import write_json_atomic
from pytest_agentloom._redaction.redactor import Redactor
from pytest_agentloom.engine._outcome.result import StepResult, StepStatus
from pytest_agentloom.engine._outcome.step_context import PendingApproval
from pytest_agentloom.engine._persist.checkpoints import check_checkpoint, checkpoint_document, load_checkpoint
from pytest_agentloom.engine._run.checkpoint_snapshot import CheckpointSnapshot
from pytest_agentloom.engine._run.child_pause import child_resume_point, saved_child
from pytest_agentloom.engine._run.saved_checkpoint import SavedCheckpoint, SavedRun, SavedWorkflow
from tests.engine.persist.test_checkpoint_snapshot import FILE_FIELDS

#: these workflows have gates whose decision no router reads, on purpose
pytestmark = pytest.mark.filterwarnings("ignore::pytest_agentloom.UnreadDecisionWarning")

HERE = Path(__file__).parent
#: a checkpoint version 1 wrote (tests/engine/steps/approval/nested_release.yaml paused inside its
#: subworkflow), committed as it was but for its workflow file's path
KNOWN = HERE / "data" / "known-1.json"
NESTED = HERE.parent / "steps" / "approval" / "nested_release.yaml"
CANARY = "sk-canary-saved-7d8e9f"
RUN_FIELDS = ["paused_step", "pending_approval", "completed_steps", "elapsed_seconds", "resumes", "state", "steps"]


def rewritten(saved: SavedCheckpoint, path: Path) -> bytes:
    """The bytes the checkpoint writer gives ``saved`` (what a failed resume writes back)."""
    return write_json_atomic(path, saved.to_document(), private=True).read_bytes()


def test_the_reader_has_exactly_the_file_fields():
    fields = [field.name for field in dataclasses.fields(SavedCheckpoint)]
    assert sorted([*fields, "format_version", "kind"]) == sorted(FILE_FIELDS)
    assert [field.name for field in dataclasses.fields(SavedRun)] == RUN_FIELDS
    assert [field.name for field in dataclasses.fields(SavedWorkflow)] == ["name", "hash", "file", "definition",
                                                                          "overrides"]
    for kind in (SavedCheckpoint, SavedRun, SavedWorkflow):
        assert kind.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_a_loaded_checkpoint_is_a_frozen_value_all_the_way_down():
    saved = load_checkpoint(KNOWN)
    assert type(saved) is SavedCheckpoint
    with pytest.raises(dataclasses.FrozenInstanceError):
        saved.status = "running"  # type: ignore[misc]
    assert saved.pending_approval is not None and saved.workflow.definition is not None
    child = saved.pending_approval["detail"]["subworkflow"]
    for change in (lambda: saved.state.__setitem__("service", "other"),  # type: ignore[index]
                   lambda: saved.steps["prepare"].__setitem__("output", "x"),  # type: ignore[index]
                   lambda: child["state"].update(service="other"),
                   lambda: child["completed_steps"].append("approve"),
                   lambda: saved.workflow.definition["steps"].pop()):  # type: ignore[index, union-attr]
        with pytest.raises(TypeError, match="cannot be changed"):
            change()
    assert saved.completed_steps == ("prepare",)
    assert load_checkpoint(KNOWN) == saved  # nothing above changed it


def test_the_known_checkpoint_is_written_back_byte_for_byte(tmp_path):
    saved = load_checkpoint(KNOWN)
    assert (saved.run_id, saved.status, saved.paused_step, saved.resumes) == ("known-1", "paused", "review/approve", 0)
    assert rewritten(saved, tmp_path / "known-1.json") == KNOWN.read_bytes()


def test_values_are_written_back_as_the_file_holds_them(tmp_path):
    """An integer where the writer usually puts a float, text outside ASCII: read and written, the same bytes."""
    document = json.loads(KNOWN.read_text())
    document["elapsed_seconds"] = 3
    document["pending_approval"]["clock"] = 0
    document["state"]["note"] = "déploiement ✓"
    path = tmp_path / "edited.json"
    original = write_json_atomic(path, document).read_bytes()
    saved = load_checkpoint(path)
    assert rewritten(saved, tmp_path / "again.json") == original
    pending = saved.pending()
    assert pending is not None and pending.step_id == "review" and pending.clock == 0.0


def test_write_then_read_round_trips_to_an_equal_value(tmp_path):
    """The writer's document read back is an equal value, and writes the same document again."""
    workflow = load_workflow(NESTED)
    plan = StepResult(step_id="prepare", status=StepStatus.SUCCESS, output={"plan": ["a", "b"]})
    snapshot = CheckpointSnapshot(
        run_id="by-hand", reason="awaiting_approval", failed_step=None, paused_step="review",
        pending_approval=PendingApproval("review", 1.5, 1_700_000_000.0),
        steps=MappingProxyType({"prepare": plan}), elapsed_seconds=1.5, resumes=2, workflow=workflow,
        state=MappingProxyType({"api_key": CANARY, "service": "billing"}))
    document = checkpoint_document(snapshot, status="paused", redactor=Redactor(["api_key"], salt="round-trip"),
                                   hash="sha256:0", saved_at=1_700_000_000.0)
    saved = check_checkpoint(json.loads(json.dumps(document)))
    assert saved.to_document() == document
    assert list(saved.to_document()) == FILE_FIELDS
    path = write_json_atomic(tmp_path / "by-hand.json", document)
    assert load_checkpoint(path) == saved
    assert rewritten(load_checkpoint(path), tmp_path / "again.json") == path.read_bytes()
    assert (saved.resumes, saved.elapsed_seconds, saved.completed_steps) == (2, 1.5, ("prepare",))
    assert CANARY not in path.read_text()


def test_a_child_pause_is_read_as_a_saved_run_and_resumed_from_it():
    """What a paused child saves in its parent's pause reads back as the same fields, and its resume is built
    from the frozen value: the run gets plain copies, and the saved data is never changed."""
    saved = load_checkpoint(KNOWN)
    assert saved.pending_approval is not None
    kept = saved.pending_approval["detail"]["subworkflow"]
    child = SavedRun.read(kept)
    assert child.to_document() == kept
    assert sorted(kept) == sorted(RUN_FIELDS)
    point, state = child_resume_point(dict(kept), load_workflow(NESTED.with_name("nested_review.yaml")), "approved")
    assert point.saved == child and point.resumes == 1 and point.decision == "approved"
    assert point.pending is not None and point.pending.step_id == "approve"
    assert list(point.results) == ["draft"]
    state["notes"] = "changed by the run"
    point.results["draft"].output = "changed too"
    assert child.state["notes"] == kept["state"]["notes"] == "notes on billing"
    assert child.steps["draft"]["output"] == "notes on billing"


def test_saved_child_writes_the_fields_a_saved_run_reads():
    workflow = load_workflow(NESTED)
    snapshot = CheckpointSnapshot(
        run_id="parent/review", reason="awaiting_approval", failed_step=None, paused_step="approve",
        pending_approval=PendingApproval("approve", 0.0, 1.0),
        steps=MappingProxyType({"draft": StepResult(step_id="draft", status=StepStatus.SUCCESS, output="notes")}),
        elapsed_seconds=0.25, resumes=0, workflow=workflow, state=MappingProxyType({"api_key": CANARY}))
    document = saved_child(snapshot, Redactor(["api_key"], salt="child"))
    assert list(document) == RUN_FIELDS
    assert SavedRun.read(document).to_document() == document
    assert CANARY not in json.dumps(document)


def tools(ship: Any) -> dict[str, Any]:
    return {"prepare": lambda service: f"plan for {service}", "draft": lambda service, token: f"notes on {service}",
            "record": lambda decision: f"recorded {decision}", "ship": ship}


def test_a_failed_resume_writes_the_checkpoint_it_read_back_counting_one_resume_more(tmp_path):
    """``_keep_resumable`` writes the read value back: the known file's bytes, but for ``resumes``."""
    def ship(decision: str) -> str:
        raise RuntimeError("deploy target unreachable")

    copy = tmp_path / "checkpoints" / "known-1.json"
    copy.parent.mkdir()
    shutil.copyfile(KNOWN, copy)
    failed = resume_workflow(copy, tools=tools(ship), workflow=NESTED, decision="approved", runs_dir=False,
                             clock=VirtualClock(), wall_clock=lambda: 1_700_000_100.0)
    assert failed.status.value == "failed" and failed.failed_step == "ship"
    expected = KNOWN.read_text().replace('\n  "resumes": 0,\n', '\n  "resumes": 1,\n')
    assert expected != KNOWN.read_text()
    assert copy.read_text() == expected
    assert failed.checkpoint == json.loads(expected)
    again = resume_workflow(copy, tools=tools(lambda decision: "shipped"), workflow=NESTED, decision="approved",
                            runs_dir=False, clock=VirtualClock(), wall_clock=lambda: 1_700_000_200.0)
    assert again.status.value == "success" and again.state["shipped"] == "shipped"


def test_a_document_given_in_memory_is_read_into_its_own_frozen_copy():
    """``resume_workflow(document)`` reads a dict the caller keeps: the value read shares nothing changeable."""
    document = json.loads(KNOWN.read_text())
    saved = check_checkpoint(document)
    document["state"]["service"] = "changed after reading"
    document["completed_steps"].append("review")
    assert saved.state["service"] == "billing" and saved.completed_steps == ("prepare",)


def test_a_results_checkpoint_reads_as_its_file_does(tmp_path):
    """The fixture's resume reads ``result.checkpoint`` (the document saved): the same value as the file."""
    paused = run_workflow(NESTED, tools=tools(lambda decision: "shipped"), clock=VirtualClock(), runs_dir=False,
                          checkpoint_dir=tmp_path, run_id="known-2", redaction_salt="same",
                          wall_clock=lambda: 1_700_000_000.0)
    assert paused.checkpoint is not None and paused.checkpoint_path is not None
    assert check_checkpoint(paused.checkpoint) == load_checkpoint(paused.checkpoint_path)
