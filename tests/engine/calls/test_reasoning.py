"""Reasoning and the result side of streaming (docs/providers.md), through the engine with a scripted provider.

The wire side (what each adapter sends and reads) is in tests/providers/test_reasoning_wire.py.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

from pytest_agentloom import Scripted, VirtualClock, WorkflowError, reply, run_workflow
from pytest_agentloom._core.clock import current_clock
from pytest_agentloom._core.types import LLMRequest, Thinking, Usage, text_listener
from pytest_agentloom._redaction.redactor import MARKER_PATTERN
from pytest_agentloom.engine._format.loader import parse_workflow
from pytest_agentloom.engine._outcome.pricing import cost_of


def flow(text: str):
    return parse_workflow(textwrap.dedent(text))


def plan_step(thinking: str, *, model: str = "claude-sonnet-4-5", extra: str = "") -> str:
    return f"""\
        name: reasoning
        steps:
          - id: plan
            type: llm_call
            model: {model}
            prompt: "Plan the migration of {{state.service}}."
            thinking: {thinking}
            output: plan
        {extra}"""


def load_error(text: str) -> WorkflowError:
    with pytest.raises(WorkflowError) as caught:
        flow(text)
    return caught.value


# --------------------------------------------------------------------------- load errors


def test_a_claude_step_with_thinking_needs_a_budget():
    error = load_error(plan_step("{enabled: true, level: high}"))
    text = str(error)
    assert "'plan'" in text and "budget_tokens" in text and "claude-sonnet-4-5" in text
    assert "How to fix" in text


def test_a_claude_model_from_config_counts_too():
    text = """\
        name: reasoning
        config: {model: claude-opus-4}
        steps:
          - {id: plan, type: llm_call, prompt: hi, thinking: {enabled: true}}
        """
    assert "budget_tokens" in str(load_error(text))


@pytest.mark.parametrize("max_tokens", [4000, 100])
def test_max_tokens_not_above_the_budget_fails_at_load(max_tokens):
    text = plan_step("{enabled: true, budget_tokens: 4000}").replace(
        "output: plan", f"output: plan\n            max_tokens: {max_tokens}"
    )
    message = str(load_error(text))
    assert "max_tokens" in message and "4000" in message and "'plan'" in message


def test_thinking_that_is_not_enabled_is_not_checked_and_not_sent():
    workflow = flow(plan_step("{enabled: false, level: high}"))
    provider = Scripted({"plan": "ok"})
    result = run_workflow(workflow, provider=provider, state={"service": "billing"}, clock=VirtualClock())
    assert result.ok
    assert provider.requests[0].request.thinking is None


def test_other_models_may_use_a_level_without_a_budget():
    flow(plan_step("{enabled: true, level: low}", model="o3"))
    flow(plan_step("{enabled: true}", model="qwen3"))


@pytest.mark.parametrize("thinking", ["{enabled: true, level: extreme}", "{enabled: true, budget_tokens: 0}",
                                      "{enabled: true, budget: 10}"])
def test_a_malformed_thinking_block_fails_at_load(thinking):
    assert "thinking" in str(load_error(plan_step(thinking, model="o3")))


def test_agents_take_a_thinking_block_and_its_budget_is_checked():
    text = """\
        name: agents
        agents:
          helper:
            model: claude-sonnet-4-5
            thinking: {enabled: true, budget_tokens: %d}
        steps:
          - {id: go, type: agent, agent: helper, prompt: hi}
        """
    assert flow(text % 2000).agents["helper"].thinking.budget_tokens == 2000
    error = load_error(text % 100)
    assert error.field == "agents.helper.thinking.budget_tokens" and "at least 1024" in str(error)


def test_reasoning_text_returned_unasked_is_kept():
    workflow = flow("""\
        name: unasked
        config: {model: deepseek-reasoner, provider: generic_openai}
        steps:
          - {id: plan, type: llm_call, prompt: "Plan."}
        """)
    provider = Scripted({"plan": reply("ok", reasoning="I thought about it")})
    result = run_workflow(workflow, provider=provider, clock=VirtualClock())
    assert result.steps["plan"].reasoning_content == "I thought about it"


# --------------------------------------------------------------------------- what reaches the provider


def test_the_request_carries_the_thinking_settings_typed():
    workflow = flow(plan_step("{enabled: true, budget_tokens: 4000, capture_reasoning: false}"))
    provider = Scripted({"plan": "ok"})
    run_workflow(workflow, provider=provider, state={"service": "billing"}, clock=VirtualClock())
    request: LLMRequest = provider.requests[0].request
    assert request.thinking == Thinking(enabled=True, budget_tokens=4000, capture_reasoning=False)
    assert "thinking" not in request.params  # typed, not a loose parameter


# --------------------------------------------------------------------------- what the step keeps


def reasoned(**thinking: Any) -> Any:
    block = json.dumps({"enabled": True, "budget_tokens": 2000, **thinking})
    workflow = flow(plan_step(block))
    answer = reply("Move consumers first.", input_tokens=10, output_tokens=5, reasoning_tokens=40,
                   reasoning="The queue has two consumers; drain them before the switch.")
    return run_workflow(workflow, provider=Scripted({"plan": answer}), state={"service": "billing"},
                        clock=VirtualClock())


def test_reasoning_reaches_the_result_and_json_but_not_the_state():
    result = reasoned()
    step = result.steps["plan"]
    assert step.reasoning_content == "The queue has two consumers; drain them before the switch."
    assert step.output == "Move consumers first."
    assert result.state["plan"] == "Move consumers first."
    data = json.loads(result.to_json())
    assert data["steps"]["plan"]["reasoning_content"] == step.reasoning_content
    assert "drain them" not in json.dumps(data["state"])
    assert "drain them" not in json.dumps(data["trace"])


def test_reasoning_tokens_count_and_bill_at_the_output_price():
    step = reasoned().steps["plan"]
    assert (step.input_tokens, step.output_tokens, step.reasoning_tokens, step.total_tokens) == (10, 5, 40, 55)
    as_output = cost_of("claude-sonnet-4-5", Usage(input_tokens=10, output_tokens=45))
    assert as_output is not None and step.cost_usd == pytest.approx(as_output)


def test_capture_reasoning_false_keeps_no_reasoning_text():
    result = reasoned(capture_reasoning=False)
    assert result.steps["plan"].reasoning_content is None
    assert "reasoning_content" not in json.loads(result.to_json())["steps"]["plan"]


def test_reasoning_is_redacted_when_the_steps_output_is(tmp_path):
    text = plan_step("{enabled: true, budget_tokens: 2000}", extra="state_schema:\n          plan: {redact: true}")
    answer = reply("the plan", reasoning="internal thoughts about billing")
    result = run_workflow(flow(text), provider=Scripted({"plan": answer}), state={"service": "billing"},
                          clock=VirtualClock(), redaction_salt="s" * 32, checkpoint_dir=tmp_path / "cps",
                          runs_dir=tmp_path / "runs")
    step = result.steps["plan"]
    assert step.reasoning_content is not None and "internal thoughts" not in step.reasoning_content
    assert MARKER_PATTERN.fullmatch(step.reasoning_content)
    assert "internal thoughts" not in result.to_json()
    written = "".join(path.read_text() for path in tmp_path.rglob("*.json"))
    assert written and "internal thoughts" not in written and "reasoning_content" not in written


def test_checkpoints_and_records_never_carry_the_reasoning(tmp_path):
    workflow = flow(plan_step("{enabled: true, budget_tokens: 2000}"))
    answer = reply("the plan", reasoning="thoughts kept in memory only")
    result = run_workflow(workflow, provider=Scripted({"plan": answer}), state={"service": "billing"},
                          clock=VirtualClock(), checkpoint_dir=tmp_path / "cps", runs_dir=tmp_path / "runs")
    assert result.steps["plan"].reasoning_content == "thoughts kept in memory only"
    files = list(tmp_path.rglob("*.json"))
    assert files
    assert all("thoughts kept" not in path.read_text() for path in files)


# --------------------------------------------------------------------------- streaming results


def streaming(extra: str = "", config: str = "{model: gpt-4o}") -> Any:
    return flow(f"""\
        name: streaming
        config: {config}
        steps:
          - id: write
            type: llm_call
            prompt: "Write."
            output: text
            {extra}
        """)


def test_a_streamed_scripted_step_records_zero_time_to_first_token():
    result = run_workflow(streaming("stream: true"), provider=Scripted({"write": "hello"}), clock=VirtualClock())
    step = result.steps["write"]
    assert step.time_to_first_token == 0.0
    [call] = result.trace.events("provider_call")
    assert call.data["time_to_first_token"] == 0.0
    assert json.loads(result.to_json())["steps"]["write"]["time_to_first_token"] == 0.0


def test_config_stream_streams_every_step_and_a_step_may_refuse():
    result = run_workflow(streaming(config="{model: gpt-4o, stream: true}"), provider=Scripted({"write": "x"}),
                          clock=VirtualClock())
    assert result.steps["write"].time_to_first_token == 0.0
    result = run_workflow(streaming("stream: false", config="{model: gpt-4o, stream: true}"),
                          provider=Scripted({"write": "x"}), clock=VirtualClock())
    assert result.steps["write"].time_to_first_token is None


def test_time_to_first_token_is_a_scripted_latency_on_the_virtual_clock():
    async def slow(request: LLMRequest) -> Any:
        await current_clock().sleep(1.25)
        return "late"

    result = run_workflow(streaming("stream: true"), provider=Scripted({"write": slow}), clock=VirtualClock())
    assert result.steps["write"].time_to_first_token == 1.25


def test_a_step_that_does_not_stream_has_no_time_to_first_token():
    result = run_workflow(streaming(), provider=Scripted({"write": "hello"}), clock=VirtualClock())
    assert result.steps["write"].time_to_first_token is None
    assert "time_to_first_token" not in result.trace.events("provider_call")[0].data
    assert "time_to_first_token" not in json.loads(result.to_json())["steps"]["write"]


def test_text_emitted_by_a_call_that_does_not_stream_still_reaches_the_runs_listener():
    """No first-text watch is put around a call that does not stream; what it emits goes straight on."""
    from pytest_agentloom._core.types import emit_text

    def chatty(request: LLMRequest) -> Any:
        emit_text("a piece")
        return "the answer"

    seen: list[str] = []
    token = text_listener.set(seen.append)
    try:
        result = run_workflow(streaming(), provider=Scripted({"write": chatty}), clock=VirtualClock())
    finally:
        text_listener.reset(token)
    assert result.ok and seen == ["a piece"]  # not the whole answer again: the step does not stream
    assert result.steps["write"].time_to_first_token is None


def test_a_streamed_step_times_its_first_piece_and_does_not_send_the_whole_again():
    from pytest_agentloom._core.types import emit_text

    async def pieces(request: LLMRequest) -> Any:
        await current_clock().sleep(0.25)
        emit_text("the ")
        await current_clock().sleep(1)
        emit_text("answer")
        return "the answer"

    seen: list[str] = []
    token = text_listener.set(seen.append)
    try:
        result = run_workflow(streaming("stream: true"), provider=Scripted({"write": pieces}), clock=VirtualClock())
    finally:
        text_listener.reset(token)
    assert result.ok and seen == ["the ", "answer"]
    assert result.steps["write"].time_to_first_token == 0.25


def test_a_retried_stream_times_its_successful_attempt():
    calls = []

    async def flaky(request: LLMRequest) -> Any:
        calls.append(request.attempt)
        await current_clock().sleep(0.5)
        if request.attempt == 1:
            from pytest_agentloom.errors import ProviderError

            raise ProviderError("cut", status=503, provider="scripted")
        return "ok"

    result = run_workflow(streaming("stream: true\n            retry: {max_retries: 1, backoff_seconds: 2}"),
                          provider=Scripted({"write": flaky}), clock=VirtualClock())
    assert result.ok and calls == [1, 2]
    assert result.steps["write"].time_to_first_token == 0.5


def test_a_step_with_tools_does_not_stream_but_sends_its_answer_whole():
    workflow = flow("""\
        name: tools
        config: {model: gpt-4o, stream: true}
        steps:
          - id: ask
            type: llm_call
            prompt: "Look it up."
            tools: [{name: lookup, description: d, parameters: {type: object, properties: {}}}]
            output: answer
        """)
    from pytest_agentloom import tool_call

    provider = Scripted({"ask": [tool_call("lookup"), "found it"]})
    seen: list[str] = []
    token = text_listener.set(seen.append)
    try:
        result = run_workflow(workflow, provider=provider, tools={"lookup": lambda: "42"}, clock=VirtualClock())
    finally:
        text_listener.reset(token)
    assert result.ok, result.steps["ask"].error
    assert all(call.request.stream is False for call in provider.requests)
    assert result.steps["ask"].time_to_first_token is None
    assert seen == ["found it"]


def test_the_text_listener_gets_each_streaming_steps_text():
    workflow = flow("""\
        name: two
        config: {model: gpt-4o, stream: true}
        steps:
          - {id: a, type: llm_call, prompt: one, output: a}
          - {id: b, type: llm_call, prompt: two, output: b}
          - {id: c, type: llm_call, prompt: three, output: c, stream: false}
        """)
    seen: list[str] = []
    token = text_listener.set(seen.append)
    try:
        run_workflow(workflow, provider=Scripted({"a": "alpha", "b": "beta", "c": "gamma"}), clock=VirtualClock())
    finally:
        text_listener.reset(token)
    assert sorted(seen) == ["alpha", "beta"]


def test_a_tool_loop_keeps_the_last_replys_reasoning():
    workflow = flow("""\
        name: tools
        config: {model: gemini-2.5-pro}
        steps:
          - id: ask
            type: llm_call
            prompt: "Look it up."
            thinking: {enabled: true, level: low}
            tools: [{name: lookup, description: d, parameters: {type: object, properties: {}}}]
            output: answer
        """)
    from pytest_agentloom import tool_call

    provider = Scripted({"ask": [tool_call("lookup"), reply("found it", reasoning="the lookup said 42")]})
    result = run_workflow(workflow, provider=provider, tools={"lookup": lambda: "42"}, clock=VirtualClock())
    assert result.ok, result.steps["ask"].error
    assert result.steps["ask"].reasoning_content == "the lookup said 42"
    assert all(call.request.thinking == Thinking(enabled=True, level="low") for call in provider.requests)


@pytest.mark.parametrize("capture", [True, False])
def test_a_structured_reply_keeps_its_reasoning_when_captured(capture):
    workflow = flow(f"""\
        name: structured
        config: {{model: gemini-2.5-pro}}
        steps:
          - id: classify
            type: llm_call
            prompt: "Classify."
            thinking: {{enabled: true, capture_reasoning: {str(capture).lower()}}}
            response_schema: {{type: json_object}}
            output: label
        """)
    provider = Scripted({"classify": reply('{"label": "bug"}', reasoning="it mentions a crash")})
    result = run_workflow(workflow, provider=provider, clock=VirtualClock())
    assert result.ok, result.steps["classify"].error
    assert result.state["label"] == {"label": "bug"}
    assert result.steps["classify"].reasoning_content == ("it mentions a crash" if capture else None)


@pytest.mark.parametrize("stream", [True, False])
def test_an_agents_answer_reaches_the_stream_whole_when_config_streams(stream):
    workflow = flow(f"""\
        name: agent
        config: {{model: gpt-4o, stream: {str(stream).lower()}}}
        agents:
          helper: {{instructions: "Answer briefly."}}
        steps:
          - {{id: go, type: agent, agent: helper, prompt: "hi", output: answer}}
        """)
    provider = Scripted({"go": "the agent's answer"})
    seen: list[str] = []
    token = text_listener.set(seen.append)
    try:
        result = run_workflow(workflow, provider=provider, clock=VirtualClock())
    finally:
        text_listener.reset(token)
    assert result.ok, result.steps["go"].error
    assert seen == (["the agent's answer"] if stream else [])
    assert all(call.request.stream is False for call in provider.requests)  # agent turns never stream
