"""Issue 30's llm_call fields, from the workflow file to the neutral request (the wire is tests/providers)."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from pytest_agentloom import Scripted, VirtualClock, WorkflowError, run_workflow, tool_call
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.tools import tool


@tool
def lookup(ticket_id: str) -> str:
    """Find a ticket."""
    return "open"


def flow(fields: str, *, model: str = "claude-sonnet-4-5") -> Any:
    text = textwrap.dedent(f"""\
        name: shapes
        config: {{model: {model}}}
        steps:
          - id: ask
            type: llm_call
            prompt: "Status?"
        """)
    return parse_workflow(text + "".join(f"    {line}\n" for line in textwrap.dedent(fields).splitlines()),
                          source=None)


def sent(workflow: Any, *replies: Any) -> list[Any]:
    provider = Scripted({"ask": list(replies) or ["ok"]})
    result = run_workflow(workflow, provider=provider, tools=[lookup], clock=VirtualClock())
    assert result.ok, result.steps["ask"].error
    return [call.request for call in provider.requests]


def test_stop_prefill_and_service_tier_reach_the_request() -> None:
    [request] = sent(flow("stop: [END]\nprefill: 'Answer:'\nservice_tier: priority"))
    assert request.params == {"stop": ["END"], "service_tier": "priority"}
    assert request.prefill == "Answer:"


def test_stop_sequences_is_another_name_for_stop() -> None:
    [request] = sent(flow("stop_sequences: '###'"))
    assert request.params == {"stop": "###"}


def test_an_empty_stop_sequence_is_a_load_error() -> None:
    with pytest.raises(WorkflowError, match="a stop sequence cannot be empty"):
        flow("stop: ['']")


def test_strict_tools_per_step_and_per_tool() -> None:
    workflow = flow("strict_tools: true\ntools: [{name: lookup}, {name: lookup2, strict: false}]")
    provider = Scripted({"ask": [tool_call("lookup", ticket_id="T-1"), "done"]})
    run_workflow(workflow, provider=provider, tools={"lookup": lookup, "lookup2": lookup}, clock=VirtualClock())
    assert [spec.strict for spec in provider.requests[0].request.tools] == [True, False]


@pytest.mark.parametrize(("fields", "field", "words"), [
    ("thinking: {enabled: true, budget_tokens: 100}", "thinking.budget_tokens", "at least 1024"),
    ("thinking: {type: adaptive, budget_tokens: 2000}", "thinking.budget_tokens", "adaptive thinking takes no budget"),
    ("thinking: {enabled: true, budget_tokens: 2000}\nmax_tokens: 1500", "max_tokens", "isn't above"),
], ids=["below-1024", "adaptive-with-budget", "max-tokens"])
def test_claude_thinking_budgets_are_checked_at_load(fields, field, words) -> None:
    with pytest.raises(WorkflowError) as caught:
        flow(fields)
    assert (caught.value.step_id, caught.value.field) == ("ask", field)
    assert words in str(caught.value)


def test_gemini_thinking_budgets_have_their_documented_range() -> None:
    with pytest.raises(WorkflowError, match="from 128 to 32768"):
        flow("thinking: {enabled: true, budget_tokens: 40000}", model="gemini-2.5-pro")
    assert flow("thinking: {enabled: true, budget_tokens: 100}", model="gpt-5") is not None  # no documented floor


def test_adaptive_thinking_needs_no_budget_and_reaches_the_request() -> None:
    [request] = sent(flow("thinking: {type: adaptive, effort: max}"))
    assert (request.thinking.enabled, request.thinking.type, request.thinking.effort) == (True, "adaptive", "max")


@pytest.mark.parametrize("other", ["tools: [{name: lookup}]", "response_schema: {type: json_object}"])
def test_a_prefill_beside_tools_or_a_response_schema_is_a_load_error(other) -> None:
    with pytest.raises(WorkflowError) as caught:
        flow(f"prefill: '{{'\n{other}")
    assert (caught.value.step_id, caught.value.field) == ("ask", "prefill")


@pytest.mark.parametrize(("config", "field"), [
    ("{model: gpt-5, providers: {openai: {api: responses}}}", "stop: [END]"),
    ("{model: gpt-4o}", "prefill: 'Sure'"),
    ("{model: gemini-2.5-flash}", "service_tier: flex"),
    ("{model: llama3.2, provider: ollama}", "strict_tools: true"),
], ids=["stop-responses", "prefill-openai", "tier-gemini", "strict-ollama"])
def test_a_field_the_files_provider_has_no_wire_form_for_is_a_load_error(config, field) -> None:
    text = textwrap.dedent(f"""\
        name: shapes
        config: {config}
        steps:
          - {{id: ask, type: llm_call, prompt: hi, {field}}}
        """)
    with pytest.raises(WorkflowError) as caught:
        parse_workflow(text)
    assert (caught.value.step_id, caught.value.field) == ("ask", field.split(":")[0])
    assert "has no field for" in str(caught.value)
