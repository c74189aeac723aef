"""The triage agent from Python: the outbox after approval, and "same inputs, same trace"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from triage_desk import Desk

from pytest_agentloom import Scripted, VirtualClock, run_workflow, tool_call

HERE = Path(__file__).parent
EMAIL = {"to": "ana@example.org", "subject": "Refund", "body": "Your refund is on its way."}


def script() -> Scripted:
    return Scripted({"triage": [
        tool_call("get_ticket", ticket_id="T-1", call_id="c1"),
        tool_call("lookup_policy", topic="refunds", call_id="c2"),
        tool_call("send_email", call_id="c3", **EMAIL),
    ]})


def test_the_email_goes_out_only_after_approval(agentloom: Any, desk: Desk) -> None:
    paused = agentloom.run("triage.yaml", provider=script())
    assert (paused.status, paused.steps["triage"].finish_reason) == ("paused", "needs_approval")
    assert desk.outbox == []

    done = agentloom.resume(paused, approve=True, provider=Scripted({"triage": "Refund approved; emailed."}))
    assert (done.status, done.steps["triage"].finish_reason) == ("success", "done")
    assert desk.outbox == [EMAIL]


def test_same_inputs_same_trace_and_the_same_tool_audit(tmp_path: Path) -> None:
    def once() -> tuple[Any, ...]:
        desk = Desk()
        result = run_workflow(HERE / "triage.yaml", provider=script(), tools=desk.tools, clock=VirtualClock(),
                              checkpoint_dir=tmp_path / "checkpoints", runs_dir=False)
        return result.to_json(), result.trace.lines(), desk.audit, desk.outbox

    first, second = once(), once()
    assert first == second
    assert [name for name, _ in first[2]] == ["get_ticket", "lookup_policy"]
