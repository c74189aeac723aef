"""A workflow run through the real gateway and SDKs against the fake server: the retry table applies."""

from __future__ import annotations

import textwrap

import pytest

from pytest_agentloom import VirtualClock, run_workflow
from pytest_agentloom.providers import default_gateway
from tests.servers.fake_llm import drop, fail, text, tool_calls

WORKFLOW = textwrap.dedent(
    """
    name: two-providers
    config:
      model: gpt-4o-mini
    state:
      ticket: "Printer on fire"
    steps:
      - id: classify
        type: llm_call
        system_prompt: "You label tickets."
        prompt: "Label: {state.ticket}"
        output: label
      - id: explain
        type: llm_call
        depends_on: [classify]
        model: claude-test-model
        stream: true
        max_tokens: 300
        prompt: "Explain why '{state.ticket}' is a {state.label}."
        output: explanation
    """
)


@pytest.fixture
def workflow(tmp_path):
    path = tmp_path / "two.yaml"
    path.write_text(WORKFLOW)
    return path


@pytest.fixture
def gateway(fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    return default_gateway()


def test_workflow_through_the_gateway(fake_llm, gateway, workflow):
    fake_llm.plan("openai", text("bug", input_tokens=12, output_tokens=1))
    fake_llm.plan("anthropic", text("Fire is a defect.", input_tokens=30, output_tokens=5))
    result = run_workflow(workflow, provider=gateway, clock=VirtualClock())
    assert result.ok, result.steps
    assert result.state["label"] == "bug" and result.state["explanation"] == "Fire is a defect."
    classify, explain = result.steps["classify"], result.steps["explain"]
    assert (classify.provider, classify.finish_reason, classify.input_tokens) == ("openai", "stop", 12)
    assert (explain.provider, explain.finish_reason, explain.output_tokens) == ("anthropic", "end_turn", 5)
    openai_call, anthropic_call = fake_llm.requests
    assert openai_call.json["messages"][1] == {"role": "user", "content": "Label: Printer on fire"}
    assert anthropic_call.json["stream"] is True and anthropic_call.json["max_tokens"] == 300


@pytest.mark.parametrize("first", [fail(429), fail(503), drop()], ids=["429", "503", "dropped"])
def test_retryable_failure_then_success(fake_llm, gateway, workflow, first):
    fake_llm.plan("openai", first, text("bug"))
    fake_llm.plan("anthropic", text("ok"))
    clock = VirtualClock()
    result = run_workflow(workflow, provider=gateway, clock=clock)
    assert result.ok, result.steps
    assert result.steps["classify"].attempts == 2
    assert clock.now() >= 1  # the backoff slept on the virtual clock, not for real


def test_400_fails_at_once(fake_llm, gateway, workflow):
    fake_llm.plan("openai", fail(400, "messages[0] is invalid"))
    result = run_workflow(workflow, provider=gateway, clock=VirtualClock())
    assert not result.ok and result.failed_step == "classify"
    step = result.steps["classify"]
    assert step.attempts == 1
    assert "HTTP 400" in step.error and "messages[0] is invalid" in step.error
    assert len(fake_llm.requests) == 1


TOOL_WORKFLOW = textwrap.dedent(
    """
    name: tool-loop
    config:
      model: {model}
      {provider_line}
    steps:
      - id: ask
        type: llm_call
        prompt: "What does loom mean?"
        tools:
          - name: lookup
            description: "Look a word up."
            parameters:
              type: object
              properties: {{word: {{type: string}}}}
              required: [word]
        output: answer
    """
)


@pytest.mark.parametrize(
    ("model", "provider", "route"),
    [
        ("gpt-4o", None, "openai"),
        ("claude-test-model", None, "anthropic"),
        ("gemini-2.5-flash", None, "gemini"),
        ("llama3.2", "ollama", "ollama"),
    ],
)
def test_tool_loop_through_each_provider(fake_llm, monkeypatch, tmp_path, model, provider, route):
    for name, value in {
        "OPENAI_API_KEY": "k",
        "OPENAI_BASE_URL": fake_llm.openai_base_url,
        "ANTHROPIC_API_KEY": "k",
        "ANTHROPIC_BASE_URL": fake_llm.url,
        "GOOGLE_API_KEY": "k",
        "GOOGLE_GEMINI_BASE_URL": fake_llm.url,
        "OLLAMA_HOST": fake_llm.url,
    }.items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "tools.yaml"
    path.write_text(TOOL_WORKFLOW.format(model=model, provider_line=f"provider: {provider}" if provider else ""))
    fake_llm.plan(route, tool_calls(("lookup", {"word": "loom"})), text("A loom is a weaving frame."))
    looked_up = []

    def lookup(word: str) -> str:
        looked_up.append(word)
        return "weaving frame"

    result = run_workflow(path, provider=default_gateway(), tools={"lookup": lookup}, clock=VirtualClock())
    assert result.ok, result.steps["ask"].error
    assert result.state["answer"] == "A loom is a weaving frame."
    assert looked_up == ["loom"]
    first, second = fake_llm.requests
    assert "weaving frame" in second.body.decode() and "lookup" in first.body.decode()
