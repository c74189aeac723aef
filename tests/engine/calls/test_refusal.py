"""A refusal ends the step (docs/providers.md: Refusals): never an empty success, a retry, a re-ask or a next turn."""

from __future__ import annotations

import textwrap

import pytest

from pytest_agentloom import Scripted, VirtualClock, reply, run_workflow, tool_call
from pytest_agentloom._core.types import LLMRequest, LLMResponse, Usage
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.engine._outcome.pricing import cost_of
from pytest_agentloom.tools import tool


def refuses(text: str = "I can't help with that."):
    return reply(refusal=text, input_tokens=10, output_tokens=4)


@tool
def lookup(word: str) -> str:
    """Look a word up."""
    return word.upper()


def flow(step: str) -> str:
    return textwrap.dedent("""
        name: refusing
        config: {model: gpt-4o}
        agents:
          helper: {tools: [lookup]}
        steps:
        %s
    """) % textwrap.indent(textwrap.dedent(step).strip(), "  ")


STEPS = {
    "plain": "- {id: ask, type: llm_call, prompt: Hi, output: reply}",
    "structured": "- {id: ask, type: llm_call, prompt: Hi, output: reply, "
                  "response_schema: {schema: {type: object}}}",
    "tool_loop": "- {id: ask, type: llm_call, prompt: Hi, output: reply, tools: [{name: lookup}]}",
    "agent": "- {id: ask, type: agent, agent: helper, prompt: Hi, output: reply}",
}


@pytest.mark.parametrize("kind", list(STEPS))
def test_every_kind_of_model_step_fails_as_refused(kind) -> None:
    script = Scripted({"ask": [tool_call("lookup", word="x"), refuses()] if kind in ("tool_loop", "agent")
                       else refuses()})
    result = run_workflow(parse_workflow(flow(STEPS[kind])), provider=script, tools=[lookup], clock=VirtualClock())
    step = result.steps["ask"]
    assert (step.status, step.error_code, step.finish_reason, step.attempts) == ("failed", "refused", "refusal", 1)
    assert "refused to answer: \"I can't help with that.\"" in (step.error or "")
    assert "reply" not in result.state
    calls = len(script.requests)
    assert calls == (2 if kind in ("tool_loop", "agent") else 1)  # no retry, no re-ask, no next turn
    assert step.input_tokens == 10 and step.cost_usd > 0  # the refused call is counted and billed
    refused = result.trace.events("provider_call")[-1]
    assert (refused.data["finish_reason"], refused.data["refusal"]) == ("refusal", "I can't help with that.")


def test_on_refusal_output_makes_the_refusal_the_answer() -> None:
    step = "- {id: ask, type: llm_call, prompt: Hi, output: reply, on_refusal: output}"
    result = run_workflow(parse_workflow(flow(step)), provider=Scripted({"ask": refuses("No.")}), clock=VirtualClock())
    assert result.ok and result.state["reply"] == "No."
    assert (result.steps["ask"].finish_reason, result.steps["ask"].output_tokens) == ("refusal", 4)
    assert result.steps["ask"].cost_usd == cost_of("gpt-4o", Usage(input_tokens=10, output_tokens=4))


def test_a_bad_on_refusal_value_is_refused_at_load() -> None:
    from pytest_agentloom.errors import WorkflowError

    with pytest.raises(WorkflowError, match="on_refusal"):
        parse_workflow(flow("- {id: ask, type: llm_call, prompt: Hi, on_refusal: maybe}"))


def test_cache_counts_reach_the_step_result_and_are_priced_at_cache_rates() -> None:
    usage = Usage(input_tokens=1000, output_tokens=10, cached_input_tokens=800, cache_write_tokens=100)
    script = Scripted({"ask": reply("ok", model="claude-sonnet-4")})
    script = _with_usage(script, usage)
    step = "- {id: ask, type: llm_call, prompt: Hi, output: reply, model: claude-sonnet-4}"
    result = run_workflow(parse_workflow(flow(step)), provider=script, clock=VirtualClock())
    shown = result.steps["ask"].to_dict()
    assert (shown["cached_input_tokens"], shown["cache_write_tokens"], shown["input_tokens"]) == (800, 100, 1000)
    # 100 plain at $3, 800 read at $0.30, 100 written at $3.75, 10 out at $15 (per million)
    assert result.steps["ask"].cost_usd == pytest.approx((100 * 3 + 800 * 0.3 + 100 * 3.75 + 10 * 15) / 1e6)
    assert result.trace.events("provider_call")[0].data["cached_input_tokens"] == 800
    plain = Usage(input_tokens=1000, output_tokens=10)
    assert cost_of("claude-sonnet-4", plain) > cost_of("claude-sonnet-4", usage)
    assert "cached_input_tokens" not in run_workflow(
        parse_workflow(flow("- {id: ask, type: llm_call, prompt: Hi}")), provider=Scripted({"ask": "ok"}),
        clock=VirtualClock()).steps["ask"].to_dict()


def _with_usage(script: Scripted, usage: Usage):
    """A provider answering like ``script``, with ``usage`` (scripted replies carry no cache counts)."""

    class Cached:
        async def complete(self, request: LLMRequest) -> LLMResponse:
            answer = await script.complete(request)
            return answer.model_copy(update={"usage": usage})

    return Cached()
