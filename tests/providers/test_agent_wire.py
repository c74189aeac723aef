"""The agent loop through the real OpenAI and Anthropic adapters, against the fake server on 127.0.0.1."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_agentloom import VirtualClock, run_workflow
from pytest_agentloom.engine._entry.resume_workflow import resume_workflow
from pytest_agentloom.providers import default_gateway
from pytest_agentloom.tools import tool
from tests.servers.fake_llm import text, tool_calls
from tests.servers.plugin import fake_llm, fake_llm_server  # noqa: F401  (fixtures)

WORKFLOW = textwrap.dedent("""\
    name: wire
    config: {{model: {model}}}
    agents:
      helper:
        instructions: "You help."
        tools: [get_ticket, send_email]
        approval_required: [send_email]
        max_tokens: 300
    steps:
      - {{id: work, type: agent, agent: helper, prompt: "Handle T-1.", output: answer}}
    """)


@pytest.fixture
def gateway(fake_llm: Any, monkeypatch: pytest.MonkeyPatch) -> Any:  # noqa: F811
    for name, value in {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake_llm.openai_base_url,
                        "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake_llm.url}.items():
        monkeypatch.setenv(name, value)
    return default_gateway()


@pytest.mark.parametrize(("model", "route"), [("gpt-4o-mini", "openai"), ("claude-test-model", "anthropic")])
def test_an_agent_pauses_for_approval_and_resumes_over_the_wire(
    fake_llm: Any, gateway: Any, tmp_path: Path, model: str, route: str,  # noqa: F811
) -> None:
    outbox: list[str] = []

    @tool
    def get_ticket(ticket_id: str) -> str:
        """Read a ticket."""
        return f"{ticket_id}: refund for order 42"

    @tool(side_effects=True)
    def send_email(to: str) -> str:
        """Email a customer."""
        outbox.append(to)
        return "sent"

    path = tmp_path / "wire.yaml"
    path.write_text(WORKFLOW.format(model=model))
    fake_llm.plan(route, tool_calls(("get_ticket", {"ticket_id": "T-1"})),
                  tool_calls(("send_email", {"to": "ana@example.org"})))
    paused = run_workflow(path, provider=gateway, tools=[get_ticket, send_email], clock=VirtualClock(),
                          checkpoint_dir=tmp_path / "checkpoints", runs_dir=False)
    assert (paused.status, paused.steps["work"].finish_reason) == ("paused", "needs_approval")
    assert outbox == []

    fake_llm.plan(route, text("Refund handled; customer emailed."))
    done = resume_workflow(paused, decision="approved", provider=gateway, tools=[get_ticket, send_email],
                           clock=VirtualClock(), runs_dir=False)
    assert (done.status, done.steps["work"].finish_reason) == ("success", "done"), done.steps["work"].error
    assert done.state["answer"] == "Refund handled; customer emailed."
    assert outbox == ["ana@example.org"]

    first, second, third = fake_llm.requests
    assert [tool_["name"] for tool_ in _tools(first.json, route)] == ["get_ticket", "send_email"]
    assert _tool_results(second.json, route) == ["T-1: refund for order 42"]
    assert _tool_results(third.json, route) == ["T-1: refund for order 42", "sent"]
    step = done.steps["work"]
    assert step.input_tokens > 0 and step.output_tokens > 0  # the reported usage of the resumed call


def _tool_results(payload: dict[str, Any], route: str) -> list[str]:
    """The tool results sent back to the model, in that provider's wire format."""
    if route == "openai":
        return [m["content"] for m in payload["messages"] if m["role"] == "tool"]
    found = []
    for message in payload["messages"]:
        if isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    found.append(content if isinstance(content, str) else content[0]["text"])
    return found


def _tools(payload: dict[str, Any], route: str) -> list[dict[str, Any]]:
    if route == "openai":
        return [item["function"] for item in payload["tools"]]
    return payload["tools"]
