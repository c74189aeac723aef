"""An approval gate inside a subworkflow: the pause reaches the parent, and a resume goes on in the child.

The parent pauses at the subworkflow step; its checkpoint holds the child (its finished steps, its
redacted state, the gate it waits at). Resuming the parent resumes the child with the decision, then
the parent goes on. Through ``resume_workflow``, the ``agentloom resume`` command and the fixture.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom import VirtualClock, resume_workflow, run_workflow
from pytest_agentloom.engine._persist.checkpoints import load_checkpoint
from pytest_agentloom.errors import CheckpointError

#: these workflows (and upstream's, and the docs' one-step fragments) have gates whose decision no router
#: reads, on purpose; the warning itself is tested in tests/engine/format/test_unread_gates.py
pytestmark = pytest.mark.filterwarnings("ignore::pytest_agentloom.UnreadDecisionWarning")

HERE = Path(__file__).parent
FLOW = HERE / "approval" / "nested_release.yaml"
CANARY = "sk-canary-nested-5151"
SALT = "nested-approval"


class Tools(dict[str, Any]):
    """The flow's tools, counting their calls: a step finished before the pause is never run again."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        super().__init__(
            prepare=lambda service: self._call("prepare", f"plan for {service}"),
            draft=lambda service, token: self._call("draft", f"notes on {service}"),
            record=lambda decision: self._call("record", f"recorded {decision}"),
            ship=lambda decision: self._call("ship", "shipped" if decision == "approved" else "held"),
        )

    def _call(self, name: str, value: str) -> str:
        self.calls.append(name)
        return value


def run(tmp_path: Path, tools: Tools, flow: Path = FLOW, **options: Any):
    return run_workflow(flow, tools=tools, clock=VirtualClock(), runs_dir=tmp_path / "runs", redaction_salt=SALT,
                        wall_clock=lambda: 1_700_000_000.0, run_id="nested-1", **options)


def resume(paused: Any, tmp_path: Path, tools: Tools, **options: Any):
    return resume_workflow(paused, tools=tools, clock=VirtualClock(), runs_dir=tmp_path / "runs",
                           redaction_salt=SALT, wall_clock=lambda: 1_700_000_050.0, **options)


def test_a_gate_in_the_child_pauses_the_parent_at_the_subworkflow_step(tmp_path):
    tools = Tools()
    paused = run(tmp_path, tools)
    assert (paused.status.value, paused.reason.value) == ("paused", "awaiting_approval")
    assert paused.paused_step == "review/approve"
    assert {sid: step.status.value for sid, step in paused.steps.items()} == {"prepare": "success",
                                                                                "review": "paused"}
    assert tools.calls == ["prepare", "draft"]
    assert [e.data["event"] for e in paused.trace.events("subworkflow")][-1] == "run_end"
    assert paused.trace.events("approval_requested")[0].step_id == "review/approve"
    saved = load_checkpoint(paused.checkpoint_path)
    assert saved.paused_step == "review/approve" and saved.completed_steps == ("prepare",)
    assert saved.pending_approval is not None
    child = saved.pending_approval["detail"]["subworkflow"]
    assert saved.pending_approval["step_id"] == "review"
    assert child["paused_step"] == "approve" and child["pending_approval"]["step_id"] == "approve"
    assert child["completed_steps"] == ["draft"] and child["state"]["notes"] == "notes on billing"
    assert CANARY not in paused.checkpoint_path.read_text()  # the child's state is redacted like the parent's
    assert child["state"]["api_key"].startswith("<REDACTED:sha256=")


@pytest.mark.parametrize(("decision", "shipped"), [(True, "shipped"), (False, "held")])
def test_resume_goes_on_inside_the_child_then_in_the_parent(tmp_path, decision, shipped):
    tools = Tools()
    paused = run(tmp_path, tools)
    ended = resume(paused, tmp_path, tools, decision=decision)
    assert ended.status.value == "success", {sid: s.error for sid, s in ended.steps.items()}
    word = "approved" if decision else "rejected"
    assert tools.calls == ["prepare", "draft", "record", "ship"]  # draft is not run again
    assert ended.state["review"] == {"decision": word, "notes": "notes on billing"}
    assert ended.state["shipped"] == shipped
    assert ended.paused_step is None and ended.steps["review"].status.value == "success"
    decided = ended.trace.events("approval_decision")[0]
    assert (decided.step_id, decided.data["decision"]) == ("review/approve", word)
    resumed = [e.data for e in ended.trace.events("subworkflow") if e.data["event"] == "run_resume"]
    assert resumed and resumed[0]["completed"] == ["draft"]


def test_a_resume_without_a_decision_stays_paused_in_the_child(tmp_path):
    tools = Tools()
    paused = run(tmp_path, tools)
    still = resume(paused, tmp_path, tools)
    assert still.status.value == "paused" and still.paused_step == "review/approve"
    assert still.trace.events("approval_waiting")[0].step_id == "review/approve"
    ended = resume(still, tmp_path, tools, decision="approved")
    assert ended.status.value == "success" and tools.calls == ["prepare", "draft", "record", "ship"]


def test_the_child_gate_times_out_on_the_clock_it_paused_on(tmp_path):
    review = tmp_path / "nested_review.yaml"
    review.write_text((HERE / "approval" / "nested_review.yaml").read_text().replace(
        'output: decision}', 'output: decision, timeout_seconds: 60, on_timeout: reject}'))
    flow = tmp_path / "nested_release.yaml"
    flow.write_text(FLOW.read_text())
    tools = Tools()
    paused = run(tmp_path, tools, flow=flow)
    late = VirtualClock()
    late.advance(61)
    ended = resume_workflow(paused, tools=tools, clock=late, runs_dir=tmp_path / "runs", redaction_salt=SALT,
                            decision="approved")
    assert ended.state["review"]["decision"] == "rejected"
    assert ended.trace.events("approval_timeout")[0].step_id == "review/approve"


def test_a_gate_two_subworkflows_deep_pauses_and_resumes_every_level(tmp_path):
    (tmp_path / "inner.yaml").write_text(
        "name: inner\nsteps:\n  - {id: gate, type: approval_gate, output: verdict}\n"
        "  - {id: after, type: tool, tool_name: record, depends_on: [gate], tool_args: {decision: '{state.verdict}'},"
        " output: recorded}\n")
    (tmp_path / "middle.yaml").write_text(
        "name: middle\nsteps:\n  - {id: deeper, type: subworkflow, workflow: inner.yaml, return_keys: [verdict],"
        " output: inner}\n")
    (tmp_path / "outer.yaml").write_text(
        "name: outer\nsteps:\n  - {id: nest, type: subworkflow, workflow: middle.yaml, output: middle}\n"
        "  - {id: ship, type: tool, tool_name: ship, depends_on: [nest],"
        " tool_args: {decision: '{state.middle.inner.verdict}'}, output: shipped}\n")
    tools = Tools()
    paused = run(tmp_path, tools, flow=tmp_path / "outer.yaml")
    assert paused.paused_step == "nest/deeper/gate"
    assert load_checkpoint(paused.checkpoint_path).paused_step == "nest/deeper/gate"
    ended = resume(paused, tmp_path, tools, decision="approved")
    assert ended.status.value == "success" and ended.state["shipped"] == "shipped"
    assert tools.calls == ["record", "ship"]


def test_a_tampered_child_in_the_checkpoint_is_refused(tmp_path):
    paused = run(tmp_path, Tools())
    document = json.loads(paused.checkpoint_path.read_text())
    document["pending_approval"]["detail"]["subworkflow"]["steps"]["draft"]["attempts"] = "many"
    with pytest.raises(CheckpointError) as caught:
        resume_workflow(document, tools=Tools(), clock=VirtualClock(), runs_dir=False, workflow=FLOW,
                        decision="approved")
    assert "pending_approval.detail.subworkflow.steps.draft.attempts" in str(caught.value)


# -- agentloom resume, and the fixture ----------------------------------------------------------------------------

CLI_TOOLS = """\
TOOLS = {
    "prepare": lambda service: f"plan for {service}",
    "draft": lambda service, token: f"notes on {service}",
    "record": lambda decision: f"recorded {decision}",
    "ship": lambda decision: "shipped" if decision == "approved" else "held",
}
"""


@pytest.mark.slow
def test_agentloom_resume_continues_a_run_paused_inside_a_subworkflow(tmp_path):
    (tmp_path / "cli_tools.py").write_text(CLI_TOOLS)
    for name in ("nested_release.yaml", "nested_review.yaml"):
        (tmp_path / name).write_text((HERE / "approval" / name).read_text())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
           "AGENTLOOM_REDACTION_SALT": SALT}
    for name in ("AGENTLOOM_RUNS_DIR", "AGENTLOOM_CHECKPOINT_DIR", "AGENTLOOM_REDACT_STATE_KEYS"):
        env.pop(name, None)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest_agentloom.cli", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=60)

    paused = cli("run", "nested_release.yaml", "--tools", "cli_tools", "--run-id", "nest-1")
    assert paused.returncode == 4, paused.stderr
    assert "review/approve" in paused.stdout and "agentloom resume nest-1 --approve" in paused.stdout
    listed = json.loads(cli("runs", "--json").stdout)
    assert [(r["run_id"], r["paused_step"]) for r in listed] == [("nest-1", "review/approve")]
    done = cli("resume", "nest-1", "--approve", "--tools", "cli_tools", "--json")
    assert done.returncode == 0, done.stderr
    state = json.loads(done.stdout)["state"]
    assert state["shipped"] == "shipped" and state["review"]["decision"] == "approved"
    assert CANARY not in (tmp_path / "agentloom_runs" / "checkpoints" / "nest-1.json").read_text()


def test_the_fixture_resumes_a_run_paused_inside_a_subworkflow(agentloom):
    tools = Tools()
    paused = agentloom.run("approval/nested_release.yaml", tools=tools)
    paused.assert_status("paused", "awaiting_approval")
    assert paused.checkpoint["paused_step"] == "review/approve"
    ended = agentloom.resume(paused, approve=True)
    ended.assert_status("success")
    ended.assert_steps("review", "review/approve", "review/record", "ship")  # what the resume ran
    assert ended.state["shipped"] == "shipped" and tools.calls == ["prepare", "draft", "record", "ship"]
    agentloom.assert_no_secrets(CANARY)


def test_a_redacted_key_put_back_on_resume_reaches_a_child_that_inherited_it(tmp_path):
    review = tmp_path / "nested_review.yaml"
    review.write_text((HERE / "approval" / "nested_review.yaml").read_text().replace(
        'tool_args: {decision: "{state.decision}"}', 'tool_args: {decision: "{state.decision} {state.api_key}"}'))
    flow = tmp_path / "nested_release.yaml"
    flow.write_text(FLOW.read_text())
    seen: list[str] = []
    tools = Tools()
    tools["record"] = lambda decision: seen.append(decision) or "recorded"
    paused = run(tmp_path, tools, flow=flow)
    marked = resume(paused, tmp_path, tools, decision="approved", state={})
    assert seen[-1].startswith("approved <REDACTED:sha256=")  # the checkpoint never held the key
    paused_again = run(tmp_path, tools, flow=flow)
    put_back = resume(paused_again, tmp_path, tools, decision="approved", state={"api_key": CANARY})
    assert seen[-1] == f"approved {CANARY}"
    assert marked.status.value == put_back.status.value == "success"
    assert CANARY not in paused_again.checkpoint_path.read_text()


AGENT_IN_CHILD = """\
name: outreach
config: {model: gpt-4o-mini}
steps:
  - id: contact
    type: subworkflow
    workflow_inline:
      name: mailer
      config: {model: gpt-4o-mini}
      agents:
        writer: {instructions: "Write to the customer.", tools: [send_email], approval_required: [send_email]}
      steps:
        - {id: write, type: agent, agent: writer, prompt: "Email the customer.", output: sent}
    output: contact
"""


def test_an_agent_awaiting_approval_in_a_child_pauses_the_parent_and_resumes_its_call(tmp_path):
    from pytest_agentloom import Scripted, tool_call
    from pytest_agentloom.engine._format.loader import parse_workflow

    outbox: list[str] = []
    tools = {"send_email": lambda to, body: outbox.append(to) or "sent"}
    call = tool_call("send_email", to="customer@example.org", body="Hello.")
    workflow = parse_workflow(AGENT_IN_CHILD)
    paused = run_workflow(workflow, provider=Scripted({"contact/write": [call]}), tools=tools, clock=VirtualClock(),
                          runs_dir=False, checkpoint_dir=tmp_path)
    assert paused.status.value == "paused" and paused.paused_step == "contact/write" and outbox == []
    ended = resume_workflow(paused, decision="approved", provider=Scripted({"contact/write": "Done."}), tools=tools,
                            clock=VirtualClock(), runs_dir=False)
    assert ended.status.value == "success", {sid: s.error for sid, s in ended.steps.items()}
    assert outbox == ["customer@example.org"] and ended.state["contact"]["sent"] == "Done."
