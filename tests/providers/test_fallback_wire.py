"""A step's ``fallback`` through the real SDKs and the fake server: Anthropic overloaded, OpenAI answers."""

from __future__ import annotations

import textwrap

import pytest

from pytest_agentloom import VirtualClock, run_workflow
from pytest_agentloom.providers import default_gateway
from tests.servers.fake_llm import drop, fail, text, tool_calls

FALLBACK_FLOW = textwrap.dedent(
    """
    name: triage
    config:
      retry: {max_retries: 0}
    steps:
      - id: classify
        type: llm_call
        model: claude-haiku-4-5
        prompt: "Label: printer on fire"
        output: label
        fallback:
          - {provider: openai, model: gpt-4o-mini}
    """
)


@pytest.fixture
def gateway(fake_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    return default_gateway()


def write(tmp_path, text_: str):
    path = tmp_path / "flow.yaml"
    path.write_text(text_)
    return path


def test_overloaded_anthropic_falls_back_to_openai_with_its_own_model(fake_llm, gateway, tmp_path):
    fake_llm.plan("anthropic", fail(529))
    fake_llm.plan("openai", text("bug"))
    result = run_workflow(write(tmp_path, FALLBACK_FLOW), provider=gateway, clock=VirtualClock())
    assert result.ok, result.steps
    assert result.state["label"] == "bug"
    step = result.steps["classify"]
    assert (step.provider, step.model) == ("openai", "gpt-4o-mini")
    sent = [(request.path, request.json["model"]) for request in fake_llm.requests]
    assert sent == [("/v1/messages", "claude-haiku-4-5"), ("/v1/chat/completions", "gpt-4o-mini")]
    [event] = [event for event in result.trace if event.kind == "fallback"]
    assert event.step_id == "classify"
    assert {key: event.data[key] for key in ("provider", "model", "reason", "to_provider", "to_model")} == {
        "provider": "anthropic", "model": "claude-haiku-4-5", "reason": "overloaded",
        "to_provider": "openai", "to_model": "gpt-4o-mini"}
    assert "529" in event.data["error"]


def test_every_provider_failing_names_each_its_model_and_why(fake_llm, gateway, tmp_path):
    fake_llm.plan("anthropic", fail(529))
    fake_llm.plan("openai", fail(503, "upstream is down"))
    result = run_workflow(write(tmp_path, FALLBACK_FLOW), provider=gateway, clock=VirtualClock())
    step = result.steps["classify"]
    assert step.status == "failed" and step.error_code == "fallbacks_exhausted"
    assert step.error.startswith("llm_call 'classify': every provider tried failed, in order: ")
    assert "anthropic (model claude-haiku-4-5): provider error (HTTP 529)" in step.error
    assert "openai (model gpt-4o-mini): provider error (HTTP 503)" in step.error
    assert "upstream is down" in step.error


def test_a_kind_the_fallback_does_not_take_fails_on_the_primary(fake_llm, gateway, tmp_path):
    flow = FALLBACK_FLOW.replace("{provider: openai, model: gpt-4o-mini}",
                                 "{provider: openai, model: gpt-4o-mini, on: [rate_limit]}")
    assert flow != FALLBACK_FLOW
    fake_llm.plan("anthropic", fail(529))
    result = run_workflow(write(tmp_path, flow), provider=gateway, clock=VirtualClock())
    assert result.steps["classify"].error_code == "provider_error"
    assert [request.path for request in fake_llm.requests] == ["/v1/messages"]


def test_a_400_is_no_reason_to_fall_back(fake_llm, gateway, tmp_path):
    fake_llm.plan("anthropic", fail(400, "bad request"))
    result = run_workflow(write(tmp_path, FALLBACK_FLOW), provider=gateway, clock=VirtualClock())
    assert result.steps["classify"].status == "failed"
    assert len(fake_llm.requests) == 1


def test_a_dropped_connection_and_a_429_fall_back_by_default(fake_llm, gateway, tmp_path):
    flow = FALLBACK_FLOW.replace("  - {provider: openai, model: gpt-4o-mini}",
                                 "  - {provider: openai, model: gpt-4o-mini}\n"
                                 "      - {provider: openai, model: gpt-4.1-mini}")
    assert flow != FALLBACK_FLOW
    fake_llm.plan("anthropic", drop())
    fake_llm.plan("openai", fail(429), text("bug"))
    result = run_workflow(write(tmp_path, flow), provider=gateway, clock=VirtualClock())
    assert result.ok, result.steps["classify"].error
    reasons = [(event.data["reason"], event.data["to_model"]) for event in result.trace if event.kind == "fallback"]
    assert reasons == [("connection", "gpt-4o-mini"), ("rate_limit", "gpt-4.1-mini")]
    assert [request.json["model"] for request in fake_llm.requests] == [
        "claude-haiku-4-5", "gpt-4o-mini", "gpt-4.1-mini"]


def test_config_fallbacks_apply_to_every_step_of_the_provider(fake_llm, gateway, tmp_path):
    flow = textwrap.dedent(
        """
        name: triage
        config:
          retry: {max_retries: 0}
          fallbacks:
            anthropic: [{provider: openai, model: gpt-4o-mini, on: [overloaded]}]
        steps:
          - id: classify
            type: llm_call
            model: claude-haiku-4-5
            prompt: "Label it"
            output: label
          - id: own
            type: llm_call
            model: claude-haiku-4-5
            prompt: "Again"
            fallback: []
            depends_on: [classify]
        """
    )
    fake_llm.plan("anthropic", fail(529), fail(529))
    fake_llm.plan("openai", text("bug"))
    result = run_workflow(write(tmp_path, flow), provider=gateway, clock=VirtualClock())
    assert result.steps["classify"].provider == "openai"
    assert result.steps["own"].status == "failed"  # fallback: [] turns them off
    assert [request.json["model"] for request in fake_llm.requests] == [
        "claude-haiku-4-5", "gpt-4o-mini", "claude-haiku-4-5"]


def test_without_a_fallback_a_529_is_retried_by_default(fake_llm, gateway, tmp_path):
    flow = FALLBACK_FLOW.replace("config:\n  retry: {max_retries: 0}\n", "").replace(
        "    fallback:\n      - {provider: openai, model: gpt-4o-mini}\n", "")
    assert "fallback" not in flow and "retry" not in flow
    fake_llm.plan("anthropic", fail(529), text("bug"))
    result = run_workflow(write(tmp_path, flow), provider=gateway, clock=VirtualClock())
    assert result.ok, result.steps
    assert result.steps["classify"].attempts == 2


def test_each_agent_turn_falls_back(fake_llm, gateway, tmp_path):
    flow = textwrap.dedent(
        """
        name: agentic
        config:
          retry: {max_retries: 0}
        agents:
          helper:
            model: claude-haiku-4-5
            tools: [lookup]
        steps:
          - id: work
            type: agent
            agent: helper
            prompt: "Find it"
            output: answer
            fallback: [{provider: openai, model: gpt-4o-mini}]
        """
    )

    def lookup(query: str = "") -> str:
        """Look something up."""
        return "found"

    fake_llm.plan("anthropic", fail(529), fail(529))
    fake_llm.plan("openai", tool_calls(("lookup", {"query": "x"})), text("done"))
    result = run_workflow(write(tmp_path, flow), provider=gateway, clock=VirtualClock(), tools={"lookup": lookup})
    assert result.ok, result.steps
    assert result.state["answer"] == "done"
    assert [request.json["model"] for request in fake_llm.requests] == [
        "claude-haiku-4-5", "gpt-4o-mini", "claude-haiku-4-5", "gpt-4o-mini"]
    assert [event.data["turn"] for event in result.trace if event.kind == "fallback"] == [1, 2]


def test_an_sdk_timeout_falls_back(fake_llm, gateway, tmp_path, monkeypatch):
    flow = FALLBACK_FLOW.replace("config:\n  retry: {max_retries: 0}\n",
                                 "config:\n  retry: {max_retries: 0}\n  providers: {anthropic: {timeout: 0.1}}\n")
    assert flow != FALLBACK_FLOW
    fake_llm.plan("anthropic", text("too late", delay=0.3))
    fake_llm.plan("openai", text("bug"))
    result = run_workflow(write(tmp_path, flow), provider=default_gateway(_loaded(tmp_path)), clock=VirtualClock())
    assert result.ok, result.steps["classify"].error
    assert [event.data["reason"] for event in result.trace if event.kind == "fallback"] == ["timeout"]


def _loaded(tmp_path):
    from pytest_agentloom.engine._format.loader import load_workflow

    return load_workflow(tmp_path / "flow.yaml").config


def test_a_scripted_provider_plays_the_failure_and_the_fallback(tmp_path):
    """No server: a scripted error, then the fallback's reply, as a unit test of a workflow would write it."""
    from pytest_agentloom.providers import Scripted, error

    scripted = Scripted({"classify": [error(529, "overloaded_error: Overloaded"), "bug"]})
    result = run_workflow(write(tmp_path, FALLBACK_FLOW), provider=scripted, clock=VirtualClock())
    assert result.ok, result.steps["classify"].error
    calls = scripted.calls("classify")
    assert [call.model for call in calls] == ["claude-haiku-4-5", "gpt-4o-mini"]
    assert [call.request.provider for call in calls] == [None, "openai"]
