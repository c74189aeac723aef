"""Config fields replaced for one run (--model, ...) stay out of the checkpoint's hash and come back on resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_agentloom import Scripted, VirtualClock, resume_workflow, run_workflow
from pytest_agentloom.engine._format.loader import load_workflow

#: these workflows (and upstream's, and the docs' one-step fragments) have gates whose decision no router
#: reads, on purpose; the warning itself is tested in tests/engine/format/test_unread_gates.py
pytestmark = pytest.mark.filterwarnings("ignore::pytest_agentloom.UnreadDecisionWarning")

FLOW = """\
name: asked
config: {model: gpt-4o-mini}
steps:
  - {id: gate, type: approval_gate, message: "Answer?", output: decision}
  - {id: reply, type: llm_call, depends_on: [gate], prompt: "Say hi", output: answer}
"""


def paused(tmp_path: Path) -> Path:
    (tmp_path / "flow.yaml").write_text(FLOW)
    workflow = load_workflow(tmp_path / "flow.yaml").with_config(model="gpt-4o", budget_usd=5.0)
    result = run_workflow(workflow, provider=Scripted({"reply": "hi"}), run_id="ov-1", clock=VirtualClock(),
                          checkpoint_dir=tmp_path / "cp", runs_dir=False, redaction_salt="s")
    assert result.status == "paused"
    return tmp_path / "cp" / "ov-1.json"


def resume(path: Path) -> str | None:
    result = resume_workflow(path, decision="approved", provider=Scripted({"reply": "hi"}), clock=VirtualClock(),
                             runs_dir=False, redaction_salt="s")
    assert result.ok, result.steps
    return result.steps["reply"].model


def test_the_run_s_overrides_are_kept_apart_and_applied_again(tmp_path: Path) -> None:
    path = paused(tmp_path)
    saved = json.loads(path.read_text())["workflow"]
    assert saved["overrides"] == {"model": "gpt-4o", "budget_usd": 5.0}
    assert resume(path) == "gpt-4o"  # the file is unchanged (the hash left the overrides out), --model again


def test_a_checkpoint_s_overrides_apply_only_the_command_line_fields_with_their_types(tmp_path: Path) -> None:
    path = paused(tmp_path)
    document = json.loads(path.read_text())
    document["workflow"]["overrides"] = {"model": 5, "sandbox": {"allow_internal_targets": True}}
    path.write_text(json.dumps(document))
    assert resume(path) == "gpt-4o-mini"  # a model that is no text, and any sandbox, are ignored
