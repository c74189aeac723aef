"""``pending_approval.detail`` (an agent's saved loop) is type-checked field by field: tampered, it exits 8."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom import Scripted, VirtualClock, run_workflow, tool_call
from pytest_agentloom.engine._entry.resume_workflow import resume_workflow
from pytest_agentloom.tools import tool
from tests.engine.persist.test_checkpoint_fields import put, resume

FLOW = """\
name: mailer
config: {model: gpt-4o-mini}
agents:
  writer:
    instructions: "Write to the customer."
    tools: [send_email]
    approval_required: [send_email]
steps:
  - {id: write, type: agent, agent: writer, prompt: "Write to ann.", output: written}
"""


@tool(side_effects=True)
def send_email(to: str, body: str) -> str:
    """Send an email."""
    return "sent"


@pytest.fixture(scope="module")
def paused(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real checkpoint of an agent waiting for approval of a call."""
    folder = tmp_path_factory.mktemp("agent")
    (folder / "flow.yaml").write_text(FLOW)
    script = Scripted({"write": [tool_call("send_email", to="ann@example.org", body="hi", call_id="c1"), "done"]})
    result = run_workflow(folder / "flow.yaml", provider=script, tools=[send_email], clock=VirtualClock(),
                          run_id="agent", runs_dir=False, checkpoint_dir=folder)
    assert result.status.value == "paused" and result.checkpoint_path is not None
    document: dict[str, Any] = json.loads(Path(result.checkpoint_path).read_text())
    assert document["pending_approval"]["detail"]["loop"]["pending"], document["pending_approval"]
    return document


D = "pending_approval.detail"
TAMPERED = [
    (f"{D}.agent", 7, f"'{D}.agent' must be text (got a number)"),
    (f"{D}.call", "x", f"'{D}.call' must be a mapping"),
    (f"{D}.call.name", 3, f"'{D}.call.name'"),
    (f"{D}.loop", [], f"'{D}.loop' must be a mapping"),
    (f"{D}.loop.messages", "x", f"'{D}.loop.messages' must be a list of messages"),
    (f"{D}.loop.messages[0]", "x", f"'{D}.loop.messages[0]' must be a mapping"),
    (f"{D}.loop.messages[0].role", 5, f"'{D}.loop.messages[0].role'"),
    (f"{D}.loop.messages[0].content", ["x"], f"'{D}.loop.messages[0].content'"),
    (f"{D}.loop.steps", "2", f"'{D}.loop.steps' must be a whole number"),
    (f"{D}.loop.stuck", -1, f"'{D}.loop.stuck' must be a whole number"),
    (f"{D}.loop.succeeded", 1.5, f"'{D}.loop.succeeded' must be a whole number"),
    (f"{D}.loop.cost_usd", "free", f"'{D}.loop.cost_usd' must be a finite number"),
    (f"{D}.loop.elapsed", {}, f"'{D}.loop.elapsed' must be a finite number"),
    (f"{D}.loop.last_text", 0, f"'{D}.loop.last_text' must be text"),
    (f"{D}.loop.progress", "yes", f"'{D}.loop.progress' must be true or false"),
    (f"{D}.loop.seen", "x", f"'{D}.loop.seen'"),
    (f"{D}.loop.pending", [], f"'{D}.loop.pending' must be a list holding the call awaiting approval"),
    (f"{D}.loop.pending[0]", 1, f"'{D}.loop.pending[0]' must be a mapping"),
    (f"{D}.loop.pending[0].arguments", {"to": 1}, f"'{D}.loop.pending[0].arguments'"),
    (f"{D}.loop.usage", "x", f"'{D}.loop.usage' must be a mapping"),
    (f"{D}.loop.usage.input_tokens", "many", f"'{D}.loop.usage.input_tokens'"),
]


@pytest.mark.parametrize(("path", "value", "problem"), TAMPERED, ids=[case[0][len(D) + 1:] for case in TAMPERED])
def test_a_tampered_field_of_the_saved_loop_exits_8_naming_it(paused: dict[str, Any], tmp_path: Path, path: str,
                                                             value: Any, problem: str) -> None:
    code, err = resume(tmp_path, put(paused, path, value))
    assert code == 8, err
    assert "CheckpointError" in err and "is malformed" in err and problem in err, err
    assert "Traceback" not in err


def test_a_missing_pending_call_exits_8(paused: dict[str, Any], tmp_path: Path) -> None:
    tampered = put(paused, f"{D}.loop", {key: value for key, value in paused["pending_approval"]["detail"]["loop"]
                                         .items() if key != "pending"})
    code, err = resume(tmp_path, tampered)
    assert code == 8 and f"'{D}.loop.pending' is missing" in err, err


def test_the_untampered_agent_checkpoint_resumes(paused: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "agent.json"
    path.write_text(json.dumps(paused))
    script = Scripted({"write": ["done"]})
    resumed = resume_workflow(path, decision=True, provider=script, tools=[send_email], runs_dir=False)
    assert resumed.status.value == "success", resumed.steps
